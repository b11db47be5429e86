// The per-step gate quantities of a batch with its advantages (the activation gates read these per step).
import type { StepGateMetrics } from '@rx/contracts';
import type { RolloutAdvantage } from '@rx/estimators';
import { percentile } from '@rx/stats';

/** |A| above this counts as a non-zero advantage (spec: frac_nonzero_advantage). */
export const NONZERO_ADVANTAGE_EPS = 1e-6;

// executedGroupSize = n / #distinct prompts; rewardMean = (1/n) sum r_i; fracNonzero = #{|A_i| > 1e-6} / n;
// effectiveNeighbors.pq = numpy-linear percentile q of n_i; fallbackFraction = #{fallback_i} / n
export function computeStepGateMetrics(
  rollouts: ReadonlyArray<{ promptId: string; reward: number }>,
  advantages: readonly RolloutAdvantage[],
): StepGateMetrics {
  const n = rollouts.length;
  if (n === 0 || advantages.length !== n) throw new RangeError(`gate metrics need one advantage per rollout (${n} rollouts, ${advantages.length} advantages)`);
  let rewardSum = 0;
  for (const r of rollouts) rewardSum += r.reward;
  const prompts = new Set(rollouts.map((r) => r.promptId)).size;
  const neighbors = advantages.map((a) => a.effectiveNeighbors);
  return {
    executedGroupSize: n / prompts,
    rewardMean: rewardSum / n,
    fracNonzeroAdvantage: advantages.filter((a) => Math.abs(a.advantage) > NONZERO_ADVANTAGE_EPS).length / n,
    effectiveNeighbors: { p10: percentile(neighbors, 10), p50: percentile(neighbors, 50), p90: percentile(neighbors, 90) },
    fallbackFraction: advantages.filter((a) => a.fallback).length / n,
  };
}
