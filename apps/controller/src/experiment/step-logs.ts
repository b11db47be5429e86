// Beside each arm's steps.jsonl: metrics.jsonl (one flat line per step, the cookbook's key names: stepMetricsLine) and
// transcripts.jsonl (the few completions each step record keeps whole, decoded, with their prompt, reward and
// advantage). Both are derived from the step records, so a resumed or restarted arm rewrites them from its records.
import * as path from 'node:path';
import { stepMetricsLine, type StepRecord, type TranscriptLine } from '@rx/contracts';
import { RUN_FILE_NAMES } from '@rx/run-dir';
import type { ExperimentContext } from './experiment-context';

/** the metrics.jsonl beside a steps.jsonl (an arm's, or a pilot arm's) */
export function metricsFileFor(stepsFile: string): string {
  return path.join(path.dirname(stepsFile), path.basename(RUN_FILE_NAMES.stepMetrics));
}

/** the transcripts.jsonl beside a steps.jsonl */
export function transcriptsFileFor(stepsFile: string): string {
  return path.join(path.dirname(stepsFile), path.basename(RUN_FILE_NAMES.transcripts));
}

/** the step's kept completions, decoded, with the question they answer */
export function stepTranscripts(r: StepRecord, questionOf: (promptId: string) => string, decode: (tokens: number[]) => string): TranscriptLine[] {
  const rollouts = new Map(r.rollouts.map((x) => [x.rolloutId, x]));
  return (r.transcripts ?? []).flatMap((t) => {
    const x = rollouts.get(t.rolloutId);
    if (!x) return [];
    return [{ step: r.step, rolloutId: x.rolloutId, promptId: x.promptId, prompt: questionOf(x.promptId), completion: decode(t.tokens), reward: x.reward, correct: x.correct, format: x.formatOk, advantage: x.advantage }];
  });
}

function questionLookup(ctx: ExperimentContext): (promptId: string) => string {
  const byId = new Map(ctx.data.train.map((p) => [p.id, p.question]));
  return (id) => byId.get(id) ?? '';
}

/** appends one step's lines to the arm's metrics.jsonl and transcripts.jsonl (of `steps` steps in all) */
export function appendStepLogs(ctx: ExperimentContext, stepsFile: string, r: StepRecord, steps: number): void {
  ctx.dir.appendLine(metricsFileFor(stepsFile), stepMetricsLine(r, steps));
  for (const t of stepTranscripts(r, questionLookup(ctx), (tokens) => ctx.renderer.decode(tokens))) ctx.dir.appendLine(transcriptsFileFor(stepsFile), t);
}

/** rewrites both files from an arm's records (a resumed arm's prefix, or [] for an arm that trains again) */
export function rewriteStepLogs(ctx: ExperimentContext, stepsFile: string, records: readonly StepRecord[]): void {
  const questionOf = questionLookup(ctx);
  ctx.dir.writeLines(metricsFileFor(stepsFile), records.map((r) => stepMetricsLine(r, ctx.spec.steps)));
  ctx.dir.writeLines(transcriptsFileFor(stepsFile), records.flatMap((r) => stepTranscripts(r, questionOf, (tokens) => ctx.renderer.decode(tokens))));
}
