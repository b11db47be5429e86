// rx check-record <run dir>: exchange/record.json read back, every file it names re-read from the run directory
// (sha256 of the bytes, and the text), the spec's expectations from spec.json, and the exchange's validators
// applied (@rx/exchange-record). A name that leads outside the run directory counts as a missing file.
import { existsSync, readFileSync, statSync } from 'node:fs';
import * as path from 'node:path';
import { checkRecord, expectedRunOf, filePins, verdictLine, type RecordCheck, type RecordFile } from '@rx/exchange-record';
import { RunDir, sha256Hex } from '@rx/run-dir';
import { EXCHANGE_RECORD, ExportError, readRunSpec } from './exchange-export';

type Json = Record<string, unknown>;
const obj = (v: unknown): Json => (v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Json) : {});
const list = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);
const at = (v: unknown, ...keys: string[]): unknown => keys.reduce<unknown>((o, k) => obj(o)[k], v);

/** every file name the record holds: predictions, manifests, observations, evidence, pilot sources, pinned sources (read before the schema check) */
export function referencedFiles(record: unknown): string[] {
  const refs: unknown[] = [];
  for (const s of list(at(record, 'evaluation', 'scores'))) refs.push(at(s, 'predictions_ref'));
  for (const e of Object.values(obj(at(record, 'evaluation', 'evaluators')))) refs.push(at(e, 'items', 'manifest_ref'));
  refs.push(at(record, 'decision', 'observations_file', 'name'));
  for (const a of Object.values(obj(at(record, 'initialization_provenance', 'arms')))) refs.push(at(a, 'initialization', 'evidence_ref'), at(a, 'initial_output', 'evidence_ref'));
  const source = at(record, 'feasibility', 'source');
  refs.push(...(typeof source === 'string' ? source.split(',').map((s) => s.trim()) : list(source)));
  for (const p of list(at(record, 'correctness_preflight', 'paths'))) {
    for (const k of ['baseline_revision', 'reference_revision', 'implementation_revision']) {
      const rev = at(p, k);
      if (typeof rev === 'string') refs.push(...filePins(rev).map((x) => x.file));
    }
  }
  return [...new Set(refs.filter((x): x is string => typeof x === 'string' && x !== ''))].sort();
}

/** a file named by the record, read only when it lies inside the run directory (null otherwise, or when absent) */
export function readInside(dir: RunDir, ref: string): RecordFile {
  const abs = path.resolve(dir.root, ref);
  if (!abs.startsWith(dir.root + path.sep) || !existsSync(abs) || !statSync(abs).isFile()) return null;
  const bytes = readFileSync(abs);
  return { sha256: sha256Hex(bytes), text: bytes.toString('utf8') };
}

export interface RunRecordCheck {
  file: string;
  check: RecordCheck;
  /** one line per validator (or the schema errors) */
  lines: string[];
}

export function checkRunRecord(root: string): RunRecordCheck {
  const dir = new RunDir(root);
  const file = dir.path(EXCHANGE_RECORD);
  if (!existsSync(file)) throw new ExportError(`${dir.relative(file)} is missing in ${dir.root}: write it with rx export ${root}`);
  let value: unknown;
  try {
    value = JSON.parse(readFileSync(file, 'utf8'));
  } catch (err) {
    throw new ExportError(`${file} is not JSON (${(err as Error).message})`);
  }
  const files = Object.fromEntries(referencedFiles(value).map((ref) => [ref, readInside(dir, ref)]));
  const check = checkRecord(value, { files, expected: expectedRunOf(readRunSpec(dir)) });
  const lines = check.ok ? check.verdicts.map(verdictLine) : [`${EXCHANGE_RECORD} does not follow the exchange schema:`, ...check.errors.map((e) => `  ${e}`)];
  return { file, check, lines };
}
