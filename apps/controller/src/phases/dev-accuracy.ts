// Greedy accuracy of an arm on the run's fixed dev sample (train items that are neither RL prompts nor test items)
// after every DEV_EVAL_EVERY updates and at its final weights: what the report plots to show an arm learning.
// Computed during the training phase, on dev, never on test, with the evaluation's own decoding and grading.
import { DEV_EVAL_EVERY } from '@rx/spec';
import type { ExperimentContext } from '../experiment/experiment-context';
import { evaluateItems } from './evaluation/evaluator';
import { evaluatorIdentity } from './evaluation/evaluation.phase';
import type { DevAccuracyPoint } from '@rx/run-dir';

export { DEV_EVAL_EVERY };

/** the weights to score: the sampler weights of steps 0, 10, 20, ... (each taken before that step's update) and the final ones */
export function devEvalPoints(checkpoints: ReadonlyArray<{ step: number; sampler_path: string }>, finalSamplerPath: string, steps: number): Array<{ updates: number; sampler_path: string }> {
  const every = checkpoints.filter((c) => c.step % DEV_EVAL_EVERY === 0 && c.step < steps).map((c) => ({ updates: c.step, sampler_path: c.sampler_path }));
  return [...every, { updates: steps, sampler_path: finalSamplerPath }];
}

export async function devAccuracyCurve(ctx: ExperimentContext, arm: string, points: ReadonlyArray<{ updates: number; sampler_path: string }>): Promise<DevAccuracyPoint[]> {
  if (ctx.data.dev.length === 0) return [];
  const { decoding } = evaluatorIdentity(ctx);
  const out: DevAccuracyPoint[] = [];
  for (const p of points) {
    const lines = await evaluateItems({
      client: await ctx.backend.createSamplingClient(p.sampler_path),
      renderer: ctx.renderer,
      items: ctx.data.dev,
      decoding,
      concurrency: ctx.concurrency,
      done: new Map(),
      signal: ctx.signal,
      onLine: () => undefined,
    });
    const correct = lines.filter((l) => l.correct).length;
    out.push({ updates: p.updates, sampler_path: p.sampler_path, n: lines.length, correct, accuracy: correct / lines.length });
  }
  ctx.progress.info(`${arm}: greedy accuracy on the ${ctx.data.dev.length} dev items after ${out.map((p) => `${p.updates}: ${p.accuracy.toFixed(3)}`).join(', ')} updates`);
  return out;
}
