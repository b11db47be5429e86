// What the advantage stage logs per batch: the only input of the gate metrics (never the config).

export interface LoggedRollout {
  promptId: string;
  reward: number;
  advantage: number;
  /** b_i: the kernel baseline (treatment) or the group mean (GRPO) */
  baseline: number;
  /** kernel: (sum w)^2 / sum w^2; group mean: group size - 1 */
  effectiveNeighbors: number;
}

export interface LoggedBatch {
  /** arm name as in the spec's `arms[].name` */
  arm: string;
  step: number;
  rollouts: readonly LoggedRollout[];
}

/** Held-out rewards of one pilot prompt (8 samples in the spec), for the baseline-reward correlation. */
export interface HeldoutPromptRewards {
  promptId: string;
  rewards: readonly number[];
}
