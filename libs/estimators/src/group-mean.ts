// GRPO advantages as the tinker-cookbook computes them (tinker_cookbook/rl/data_processing.py, `compute_advantages`
// and `remove_constant_reward_groups`; re-implemented in float64, not copied).
import type { RolloutAdvantage, ScoredRollout } from './rollout';

export interface GroupMeanOptions {
  /**
   * Flag the groups whose rewards are all equal as `dropped` (the cookbook's `remove_constant_reward_groups`).
   * Default false, as the cookbook's `rl.train.Config.remove_constant_reward_groups` defaults to False.
   * When every group is constant, the first group (in batch order) is kept, as the cookbook returns `groups[0:1]`.
   */
  dropConstantGroups?: boolean;
}

/** A group: the rollouts of one prompt within one step, in batch order. */
interface Group {
  readonly indices: number[];
  readonly rewards: number[];
}

// Group key: the same prompt within the same step (a batch normally holds one step).
function groupKey(rollout: ScoredRollout): string {
  return JSON.stringify([rollout.step, rollout.promptId]);
}

// Groups in order of first appearance in the batch.
function groupsOf(batch: readonly ScoredRollout[]): Group[] {
  const byKey = new Map<string, Group>();
  batch.forEach((rollout, index) => {
    if (!Number.isFinite(rollout.reward)) {
      throw new RangeError(`rollout ${rollout.rolloutId}: reward must be a finite number, got ${rollout.reward}`);
    }
    const key = groupKey(rollout);
    let group = byKey.get(key);
    if (!group) {
      group = { indices: [], rewards: [] };
      byKey.set(key, group);
    }
    group.indices.push(index);
    group.rewards.push(rollout.reward);
  });
  return [...byKey.values()];
}

// constant group: r_1 = r_2 = ... = r_G (exact equality, as the cookbook's `all_same`)
function isConstant(rewards: readonly number[]): boolean {
  return rewards.every((r) => r === rewards[0]);
}

// mean(r) = (1/G) * sum_g r_g
function mean(values: readonly number[]): number {
  let sum = 0;
  for (const v of values) sum += v;
  return sum / values.length;
}

// A_i = r_i - mean(r_j : j in the group of i), group = same promptId within the step; constant group: A_i = 0
export function groupMeanAdvantages(
  batch: readonly ScoredRollout[],
  opts: GroupMeanOptions = {},
): RolloutAdvantage[] {
  const dropConstantGroups = opts.dropConstantGroups ?? false;
  const groups = groupsOf(batch);
  const constant = groups.map((g) => isConstant(g.rewards));
  const allConstant = constant.every(Boolean);
  const out = new Array<RolloutAdvantage>(batch.length);
  groups.forEach((group, g) => {
    const baseline = constant[g] ? group.rewards[0] : mean(group.rewards);
    // the cookbook keeps the first group when every group is constant ("in case empty list will cause problems")
    const dropped = dropConstantGroups && constant[g] && !(allConstant && g === 0);
    for (const index of group.indices) {
      const rollout = batch[index];
      out[index] = {
        rolloutId: rollout.rolloutId,
        baseline,
        advantage: constant[g] ? 0 : rollout.reward - baseline,
        effectiveNeighbors: group.indices.length - 1,
        fallback: false,
        dropped,
      };
    }
  });
  return out;
}
