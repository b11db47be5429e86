// The training signals of one step's batch that practitioners of GRPO-style training look at first: how many groups
// teach nothing (zero reward spread), how groups split into all good / all bad / mixed, how many completions
// max_tokens cut, how long completions are, and how far rewards spread.
import { completionLengths, type CompletionLengths } from './completion-lengths';
import { fracRewardZeroStd, groupFractions, type GroupFractions } from './reward-groups';
import type { SignalEstimator, SignalRollout } from './signal-rollout';

export interface BatchSignals {
  /** group mean: share of groups with zero reward spread; kernel: share of rollouts with baseline = reward */
  fracRewardZeroStd: number;
  groups: GroupFractions;
  lengths: CompletionLengths;
  /** the population standard deviation of the step's rewards (over all its rollouts) */
  rewardStd: number;
}

export function batchSignals(rollouts: readonly SignalRollout[], estimator: SignalEstimator): BatchSignals {
  return {
    fracRewardZeroStd: fracRewardZeroStd(rollouts, estimator),
    groups: groupFractions(rollouts),
    lengths: completionLengths(rollouts),
    rewardStd: populationStd(rollouts.map((r) => r.reward)),
  };
}

// sqrt(sum (x - mean)^2 / n), numpy's np.std; 0 for no value
export function populationStd(values: readonly number[]): number {
  const n = values.length;
  if (n === 0) return 0;
  const mean = values.reduce((s, v) => s + v, 0) / n;
  return Math.sqrt(values.reduce((s, v) => s + (v - mean) ** 2, 0) / n);
}
