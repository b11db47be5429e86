// grader, on `rollouts`: decode each completion and score it with the cookbook reward (libs/grading).
import type { Renderer } from '@rx/backend';
import type { GradedBatch, SampledBatch } from '@rx/contracts';

/** libs/grading's gradeCompletion, as the grader calls it. */
export type GradeFn = (
  completion: string,
  datasetAnswer: string,
  opts: { endedOnStop: boolean; formatCoef?: number },
) => { correct: boolean; formatOk: boolean; extracted: string | null; reward: number };

export interface GradeStageDeps {
  renderer: Renderer;
  grade: GradeFn;
  now?: () => number;
}

// endedOnStop = stopReason is 'stop' and the last token is a stop token; the text graded leaves that token out
export function gradeBatch(batch: SampledBatch, deps: GradeStageDeps): GradedBatch {
  const now = deps.now ?? Date.now;
  const started = now();
  const answers = new Map(batch.prompts.map((p) => [p.promptId, p.answer]));
  const stops = new Set(deps.renderer.stopTokens);
  const rollouts = batch.rollouts.map((r) => {
    const last = r.tokens[r.tokens.length - 1];
    const endedOnStop = r.stopReason === 'stop' && last !== undefined && stops.has(last);
    const text = deps.renderer.decode(endedOnStop ? r.tokens.slice(0, -1) : r.tokens);
    const g = deps.grade(text, answers.get(r.promptId)!, { endedOnStop, formatCoef: batch.plan.formatCoef });
    return { ...r, reward: g.reward, correct: g.correct, formatOk: g.formatOk };
  });
  return {
    runId: batch.runId,
    arm: batch.arm,
    step: batch.step,
    plan: batch.plan,
    samplerPath: batch.samplerPath,
    prompts: batch.prompts.map((p) => ({ promptId: p.promptId, tokens: p.tokens })),
    rollouts,
    timings: { ...batch.timings, grade: (now() - started) / 1000 },
  };
}
