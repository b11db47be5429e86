// What the validators judge a record against, besides the record itself: the files it names, re-read from the run
// directory (their sha256 from the bytes, and their text), and what the spec pre-registered (ExpectedRun).
import type { BoundName } from '@rx/stats';

/** a file the record names, as found in the run directory; null when it is not there */
export type RecordFile = { sha256: string; text: string } | null;
export type RecordFiles = Readonly<Record<string, RecordFile>>;

/** the ten settings a feasibility projection depends on */
export const FEASIBILITY_KEYS = ['base_model', 'lora_rank', 'dataset', 'steps', 'batch_size', 'max_seq_len', 'max_tokens', 'arms', 'n_examples', 'n_eval'] as const;
export type FeasibilityKey = (typeof FEASIBILITY_KEYS)[number];

export interface ExpectedOptimizer {
  family: string;
  lr: number;
  beta1: number;
  beta2: number;
  eps: number;
}

export interface ExpectedPath {
  id: string;
  baseline_revision: string;
  reference_revision: string;
  tolerances: Record<string, { atol: number; rtol: number; min_cosine?: number }>;
}

/** the pre-registered facts a record is checked against (from the spec: expectedRunOf) */
export interface ExpectedRun {
  arms: Array<{ name: string; optimizer: ExpectedOptimizer }>;
  treatment: string;
  baseline: string;
  effective_config: Record<FeasibilityKey, unknown>;
  max_wall_minutes: number;
  decision: { alpha: number; margin: number; bounds: [number, number]; weights: { treatment: number; baseline: number }; bound: BoundName; orderSeed: number };
  correctness: { required: boolean; paths: ExpectedPath[] };
}

export interface RecordEvidence {
  files: RecordFiles;
  expected: ExpectedRun;
}

export type ValidatorStatus = 'passed' | 'invalid' | 'unverified' | 'unknown';

export interface ValidatorVerdict {
  validator: 'evaluator_validation' | 'decision_validation' | 'restoration_validation' | 'feasibility' | 'correctness_validation';
  status: ValidatorStatus;
  issues: string[];
}

export const SHA256_HEX = /^[0-9a-f]{64}$/;

export function isSha256(x: unknown): x is string {
  return typeof x === 'string' && SHA256_HEX.test(x);
}

/** JSON with object keys sorted at every level, so one value has one text */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(sortKeys(value));
}

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const k of Object.keys(value as Record<string, unknown>).sort()) {
      const v = (value as Record<string, unknown>)[k];
      if (v !== undefined) out[k] = sortKeys(v);
    }
    return out;
  }
  return value;
}

export { sha256Text } from './sha256';

/** the lines of a JSONL text that parse as objects; null when any line does not */
export function jsonLines(text: string): Array<Record<string, unknown>> | null {
  const out: Array<Record<string, unknown>> = [];
  for (const line of text.split('\n')) {
    if (line.trim() === '') continue;
    try {
      const v: unknown = JSON.parse(line);
      if (v === null || typeof v !== 'object' || Array.isArray(v)) return null;
      out.push(v as Record<string, unknown>);
    } catch {
      return null;
    }
  }
  return out;
}

export function verdict(validator: ValidatorVerdict['validator'], failStatus: Exclude<ValidatorStatus, 'passed'>, issues: string[]): ValidatorVerdict {
  return { validator, status: issues.length === 0 ? 'passed' : failStatus, issues };
}

/** a referenced file re-derived: the issue when it is missing or its bytes do not hash to the recorded sha256 */
export function fileIssue(files: RecordFiles, ref: string, recorded: string | null | undefined, what: string): string | null {
  const f = files[ref];
  if (!f) return `${what} ${ref} is not in the run directory`;
  if (recorded !== undefined && recorded !== null && f.sha256 !== recorded) return `${what} ${ref}: sha256 ${f.sha256.slice(0, 12)}… of the file differs from the recorded ${recorded.slice(0, 12)}…`;
  return null;
}
