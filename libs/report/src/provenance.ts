// What a reviewer asks first, read from record.json and spec.json: the code (commit, dirty), the hashes of the
// spec, predictions and observations, wall time per phase against the budget, the spec revision (an override),
// and whether the dataset stands in for GSM8K; and the items on which the two arms disagree, with both answers.
import { readRunFileIfExists, readRunLines, RunDir, RunFileError, type RunFileName, type RunFileType } from '@rx/run-dir';
import { describeRevision } from '@rx/spec';

export interface Provenance {
  rows: Array<[string, string]>;
  /** set when the run's dataset is not GSM8K (the embedded `arith` task) */
  datasetNote: string | null;
}

/** a file of the run through its schema; null when absent or unreadable (the report's notes name those) */
function partOf<N extends RunFileName>(dir: RunDir, name: N): RunFileType<N> | null {
  try {
    return readRunFileIfExists(dir, name);
  } catch (err) {
    if (err instanceof RunFileError) return null;
    throw err;
  }
}

const seconds = (s: number): string => (s >= 60 ? `${(s / 60).toFixed(1)} min` : `${s.toFixed(1)} s`);

export function readProvenance(root: string): Provenance {
  const rows: Array<[string, string]> = [];
  const dir = new RunDir(root);
  const r = partOf(dir, 'record.json');
  const git = r?.code_revision.git;
  rows.push(['commit', git ? `${git.commit}${git.dirty ? ' (dirty: uncommitted changes)' : ' (clean)'}` : 'unknown (no git revision recorded)']);
  if (r) rows.push(['source tree sha256', r.code_revision.tree_sha256], ['spec sha256', r.spec.sha256]);
  // the spec's own recorded revision (specs/embedded.json is revision 1 of the published spec), then any override
  const revised = r?.revision ? `${describeRevision(r.revision)}: ${r.revision.why}` : null;
  const override = r?.spec.override ? `override ${r.spec.override.source} (sha256 ${r.spec.override.sha256})` : null;
  rows.push(['spec revision', [revised, override].filter((x) => x !== null).join('; ') || 'none (the spec as pre-registered)']);
  if (r) rows.push(['predictions sha256', r.predictions.sha256], ['observations sha256', r.observations.sha256]);
  const wall = Object.entries(r?.wall_seconds ?? {}).filter((e): e is [string, number] => typeof e[1] === 'number');
  if (wall.length > 0) rows.push(['wall time per phase', wall.map(([p, s]) => `${p} ${seconds(s)}`).join(', ')]);
  if (r) {
    const b = r.feasibility.budget;
    const within = r.feasibility.within_budget;
    rows.push(['budget', `${b.max_wall_minutes} min wall, ${b.gpu_hours} GPU hours${within === true ? ': within budget' : within === false ? ': OVER budget' : ''}`]);
  }
  const dataset = partOf(dir, 'spec.json')?.dataset.name;
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

const COMPLETION_SHOWN = 120;

/** a model's eval.jsonl, through its line schema (the lines before a torn or malformed one) */
function answers(dir: RunDir, model: string): Map<string, { correct: boolean; answer: string; completion: string }> {
  const lines = readRunLines(dir, '<model>/eval.jsonl', dir.evalFile(model));
  return new Map(lines.map((l) => [l.item_id, { correct: l.correct, answer: l.extracted ?? '(no answer)', completion: l.completion.slice(0, COMPLETION_SHOWN) }]));
}

/** the items exactly one of the two arms got right, with both extracted answers (at most `limit`) */
export function discordantItems(root: string, treatment: string, baseline: string, limit = 50): { items: DiscordantItem[]; total: number } {
  const dir = new RunDir(root);
  const t = answers(dir, treatment);
  const b = answers(dir, baseline);
  const items: DiscordantItem[] = [];
  for (const [id, x] of t) {
    const y = b.get(id);
    if (!y || x.correct === y.correct) continue;
    items.push({ itemId: id, rightArm: x.correct ? treatment : baseline, treatmentAnswer: x.answer, baselineAnswer: y.answer, treatmentCompletion: x.completion, baselineCompletion: y.completion });
  }
  return { items: items.slice(0, limit), total: items.length };
}
