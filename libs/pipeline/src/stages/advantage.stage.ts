// advantage, on `graded-rollouts`: the arm's estimator over the batch (kernel: against the window as it was
// before this step), the window advanced by the batch, and the step's gate metrics.
import type { GradedBatch, TrainStep } from '@rx/contracts';
import { appendToWindow, DEFAULT_WINDOW_SIZE, groupMeanAdvantages, kernelBaseline, type RolloutAdvantage, type ScoredRollout } from '@rx/estimators';
import type { RolloutWindowStore } from '../rollout-window.store';
import { UnrecoverableStageError } from '../stage-errors';
import { computeStepGateMetrics } from '../step-gate-metrics';

export interface AdvantageStageDeps {
  windows: RolloutWindowStore;
  now?: () => number;
}

export function scoredRollouts(batch: Pick<GradedBatch, 'step' | 'rollouts'>): ScoredRollout[] {
  return batch.rollouts.map((r) => ({ rolloutId: r.rolloutId, step: batch.step, promptId: r.promptId, reward: r.reward, phi: [r.phi[0], r.phi[1]] as const }));
}

function sameWindow(a: readonly ScoredRollout[], b: readonly ScoredRollout[]): boolean {
  if (a.length !== b.length) return false;
  return a.every((r, i) => r.rolloutId === b[i].rolloutId && r.step === b[i].step && r.promptId === b[i].promptId && r.reward === b[i].reward && r.phi[0] === b[i].phi[0] && r.phi[1] === b[i].phi[1]);
}

export async function computeAdvantages(batch: GradedBatch, deps: AdvantageStageDeps): Promise<TrainStep> {
  const now = deps.now ?? Date.now;
  const started = now();
  const key = { runId: batch.runId, arm: batch.arm };
  const plan = batch.plan.advantage;
  const scored = scoredRollouts(batch);
  const capacity = plan.estimator === 'kernel_cross_prompt_baseline' ? plan.windowSize : DEFAULT_WINDOW_SIZE;
  const before = await deps.windows.windowBefore(key, batch.step, capacity);

  let advantages: RolloutAdvantage[];
  if (plan.estimator === 'group_mean') {
    advantages = groupMeanAdvantages(scored, { dropConstantGroups: plan.dropConstantGroups });
  } else {
    advantages = kernelBaseline(scored, before.rollouts, { bandwidth: plan.bandwidth, windowSize: plan.windowSize });
  }
  // the window after N is written once; a replay (same seeds, same weights) must have built the same one
  const after = appendToWindow(before, scored);
  const stored = await deps.windows.commitAfter(key, batch.step, after);
  if (!sameWindow(stored.rollouts, after.rollouts)) {
    throw new UnrecoverableStageError(
      `the window after step ${batch.step} of ${batch.runId}/${batch.arm} already holds a different batch: this batch was not sampled ` +
        'as the first one was (same weights and seeds must give the same rollouts), so training on it could use a rollout twice or skip one',
    );
  }

  const byId = new Map(advantages.map((a) => [a.rolloutId, a]));
  return {
    runId: batch.runId,
    arm: batch.arm,
    step: batch.step,
    plan: batch.plan,
    samplerPath: batch.samplerPath,
    prompts: batch.prompts,
    rollouts: batch.rollouts.map((r) => {
      const a = byId.get(r.rolloutId)!;
      return { ...r, advantage: a.advantage, baseline: a.baseline, effectiveNeighbors: a.effectiveNeighbors, fallback: a.fallback, dropped: a.dropped };
    }),
    gate: computeStepGateMetrics(batch.rollouts, advantages),
    timings: { ...batch.timings, advantage: (now() - started) / 1000 },
  };
}
