// advantage, on `graded-rollouts`: the arm's estimator over the batch (kernel: against the window as it was
// before this step), the window advanced by the batch, and the step's gate metrics.
import type { GradedBatch, TrainStep } from '@rx/contracts';
import { appendToWindow, DEFAULT_WINDOW_SIZE, groupMeanAdvantages, kernelBaseline, type RolloutAdvantage, type ScoredRollout } from '@rx/estimators';
import type { RolloutWindowStore } from '../rollout-window.store';
import { computeStepGateMetrics } from '../step-gate-metrics';

export interface AdvantageStageDeps {
  windows: RolloutWindowStore;
  now?: () => number;
}

export function scoredRollouts(batch: Pick<GradedBatch, 'step' | 'rollouts'>): ScoredRollout[] {
  return batch.rollouts.map((r) => ({ rolloutId: r.rolloutId, step: batch.step, promptId: r.promptId, reward: r.reward, phi: [r.phi[0], r.phi[1]] as const }));
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
  await deps.windows.commitAfter(key, batch.step, appendToWindow(before, scored));

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
