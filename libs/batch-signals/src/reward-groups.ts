// The step's rollouts grouped by prompt, and the share of groups by how their rewards spread: the tinker-cookbook's
// by_group fractions (metric_util._compute_by_group_metrics: a group whose rewards are all the same is all good when
// that reward is >= 0.5, else all bad; any other group is mixed), the same by the correct bit, and the share of
// groups whose rewards have zero spread (GRPO learns nothing from them).
import type { SignalEstimator, SignalRollout } from './signal-rollout';

/** the cookbook's good_thresh */
export const GOOD_REWARD_THRESHOLD = 0.5;
/** a reward spread (max - min) or |baseline - reward| at most this is zero */
export const ZERO_SPREAD_EPS = 1e-12;

export interface GroupFractions {
  /** groups whose rewards are not all the same */
  mixed: number;
  /** groups whose rewards are all the same and >= 0.5 */
  allGood: number;
  /** groups whose rewards are all the same and < 0.5 */
  allBad: number;
  /** groups whose every rollout is correct */
  allCorrect: number;
  /** groups whose every rollout is wrong */
  allWrong: number;
}

/** the rollouts of each prompt, in the order prompts first appear */
export function groupsByPrompt<R extends Pick<SignalRollout, 'promptId'>>(rollouts: readonly R[]): R[][] {
  const groups = new Map<string, R[]>();
  for (const r of rollouts) {
    const g = groups.get(r.promptId);
    if (g) g.push(r);
    else groups.set(r.promptId, [r]);
  }
  return [...groups.values()];
}

// mixed = #{g : rewards of g not all equal} / #groups; all good / all bad split the others at reward 0.5 (0 for no group)
export function groupFractions(rollouts: readonly SignalRollout[]): GroupFractions {
  const groups = groupsByPrompt(rollouts);
  const n = groups.length;
  if (n === 0) return { mixed: 0, allGood: 0, allBad: 0, allCorrect: 0, allWrong: 0 };
  let mixed = 0;
  let allGood = 0;
  let allBad = 0;
  let allCorrect = 0;
  let allWrong = 0;
  for (const g of groups) {
    if (g.every((r) => r.reward === g[0].reward)) {
      if (g[0].reward >= GOOD_REWARD_THRESHOLD) allGood++;
      else allBad++;
    } else {
      mixed++;
    }
    if (g.every((r) => r.correct)) allCorrect++;
    if (g.every((r) => !r.correct)) allWrong++;
  }
  return { mixed: mixed / n, allGood: allGood / n, allBad: allBad / n, allCorrect: allCorrect / n, allWrong: allWrong / n };
}

// group mean: #{g : max r - min r <= 1e-12} / #groups; kernel (GS1, one rollout per prompt): #{i : |b_i - r_i| <= 1e-12} / #rollouts
export function fracRewardZeroStd(rollouts: readonly SignalRollout[], estimator: SignalEstimator): number {
  if (rollouts.length === 0) return 0;
  if (estimator === 'kernel_cross_prompt_baseline') {
    return rollouts.filter((r) => Math.abs(r.baseline - r.reward) <= ZERO_SPREAD_EPS).length / rollouts.length;
  }
  const groups = groupsByPrompt(rollouts);
  const flat = groups.filter((g) => {
    const rewards = g.map((r) => r.reward);
    return Math.max(...rewards) - Math.min(...rewards) <= ZERO_SPREAD_EPS;
  });
  return flat.length / groups.length;
}
