// What a reviewer asks first, read from record.json and spec.json: the code (commit, dirty), the hashes of the
// spec, predictions and observations, wall time per phase against the budget, the spec revision (an override),
// and whether the dataset stands in for GSM8K; and the items on which the two arms disagree, with both answers.
import { existsSync, readFileSync } from 'node:fs';
import * as path from 'node:path';
import { z } from 'zod';

const sha = z.string();
const recordProvenanceSchema = z
  .object({
    code_revision: z.object({ git: z.object({ commit: z.string(), dirty: z.boolean() }).nullable().optional(), tree_sha256: sha.optional() }).passthrough().optional(),
    spec: z.object({ sha256: sha.optional(), source_sha256: sha.optional(), override: z.object({ source: z.string(), sha256: sha }).nullable().optional() }).passthrough().optional(),
    predictions: z.object({ sha256: sha }).passthrough().optional(),
    observations: z.object({ sha256: sha }).passthrough().optional(),
    wall_seconds: z.record(z.unknown()).optional(),
    feasibility: z.object({ budget: z.object({ max_wall_minutes: z.number(), gpu_hours: z.number() }), within_budget: z.boolean().nullable().optional() }).passthrough().optional(),
  })
  .passthrough();

const specDatasetSchema = z.object({ dataset: z.object({ name: z.string() }).passthrough().optional(), title: z.string().optional() }).passthrough();

export interface Provenance {
  rows: Array<[string, string]>;
  /** set when the run's dataset is not GSM8K (the embedded `arith` task) */
  datasetNote: string | null;
}

function readJson(file: string): unknown {
  try {
    return existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')) as unknown) : null;
  } catch {
    return null;
  }
}

const seconds = (s: number): string => (s >= 60 ? `${(s / 60).toFixed(1)} min` : `${s.toFixed(1)} s`);

export function readProvenance(root: string): Provenance {
  const rows: Array<[string, string]> = [];
  const record = recordProvenanceSchema.safeParse(readJson(path.join(root, 'record.json')));
  const r = record.success ? record.data : {};
  const git = r.code_revision?.git;
  rows.push(['commit', git ? `${git.commit}${git.dirty ? ' (dirty: uncommitted changes)' : ' (clean)'}` : 'unknown (no git revision recorded)']);
  if (r.code_revision?.tree_sha256) rows.push(['source tree sha256', r.code_revision.tree_sha256]);
  if (r.spec?.sha256) rows.push(['spec sha256', r.spec.sha256]);
  rows.push(['spec revision', r.spec?.override ? `override ${r.spec.override.source} (sha256 ${r.spec.override.sha256})` : 'none (the spec as pre-registered)']);
  if (r.predictions) rows.push(['predictions sha256', r.predictions.sha256]);
  if (r.observations) rows.push(['observations sha256', r.observations.sha256]);
  const wall = Object.entries(r.wall_seconds ?? {}).filter((e): e is [string, number] => typeof e[1] === 'number');
  if (wall.length > 0) rows.push(['wall time per phase', wall.map(([p, s]) => `${p} ${seconds(s)}`).join(', ')]);
  if (r.feasibility) {
    const b = r.feasibility.budget;
    const within = r.feasibility.within_budget;
    rows.push(['budget', `${b.max_wall_minutes} min wall, ${b.gpu_hours} GPU hours${within === true ? ': within budget' : within === false ? ': OVER budget' : ''}`]);
  }
  const spec = specDatasetSchema.safeParse(readJson(path.join(root, 'spec.json')));
  const dataset = spec.success ? spec.data.dataset?.name : undefined;
  if (dataset) rows.push(['dataset', dataset]);
  const datasetNote =
    dataset && !/gsm8k/i.test(dataset)
      ? `This run's dataset is \`${dataset}\`, which stands in for GSM8K: its accuracies are not GSM8K accuracies, whatever the spec's title says.`
      : null;
  return { rows, datasetNote };
}

export interface DiscordantItem {
  itemId: string;
  /** the arm that got it right */
  rightArm: string;
  treatmentAnswer: string;
  baselineAnswer: string;
  /** the start of each completion */
  treatmentCompletion: string;
  baselineCompletion: string;
}

// a line of <model>/eval.jsonl as the evaluator writes it (apps/controller evaluator.ts)
const evalLineSchema = z.object({ item_id: z.union([z.string(), z.number()]), correct: z.boolean(), extracted: z.string().nullable().optional(), completion: z.string().optional() }).passthrough();

const COMPLETION_SHOWN = 120;

function answers(file: string): Map<string, { correct: boolean; answer: string; completion: string }> {
  const out = new Map<string, { correct: boolean; answer: string; completion: string }>();
  if (!existsSync(file)) return out;
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    if (line.trim() === '') continue;
    try {
      const p = evalLineSchema.safeParse(JSON.parse(line));
      if (p.success) out.set(String(p.data.item_id), { correct: p.data.correct, answer: p.data.extracted ?? '(no answer)', completion: (p.data.completion ?? '').slice(0, COMPLETION_SHOWN) });
    } catch {
      // a torn line: left out
    }
  }
  return out;
}

/** the items exactly one of the two arms got right, with both extracted answers (at most `limit`) */
export function discordantItems(root: string, treatment: string, baseline: string, limit = 50): { items: DiscordantItem[]; total: number } {
  const t = answers(path.join(root, treatment, 'eval.jsonl'));
  const b = answers(path.join(root, baseline, 'eval.jsonl'));
  const items: DiscordantItem[] = [];
  for (const [id, x] of t) {
    const y = b.get(id);
    if (!y || x.correct === y.correct) continue;
    items.push({ itemId: id, rightArm: x.correct ? treatment : baseline, treatmentAnswer: x.answer, baselineAnswer: y.answer, treatmentCompletion: x.completion, baselineCompletion: y.completion });
  }
  return { items: items.slice(0, limit), total: items.length };
}
