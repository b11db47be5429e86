// Plain data shared by the estimators, the gates and the pipeline.

/** A graded rollout as the advantage estimators see it. */
export interface ScoredRollout {
  /** unique within a run and arm: `<step>-<index in batch>` */
  rolloutId: string;
  step: number;
  promptId: string;
  reward: number;
  /** phi = (ln prompt_token_count, mean prompt-token logprob under the sampling policy) */
  phi: readonly [number, number];
}

/** Advantage of one rollout, in batch order. */
export interface RolloutAdvantage {
  rolloutId: string;
  baseline: number;
  advantage: number;
  /** kernel: (sum w)^2 / sum w^2; group mean: group size - 1 */
  effectiveNeighbors: number;
  /** kernel: mass < 1e-3, baseline fell back to the window mean */
  fallback: boolean;
  /** group mean: the rollout's group had constant reward and was dropped from training */
  dropped: boolean;
}
