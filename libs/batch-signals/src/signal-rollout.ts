// What the batch signals read of one rollout of a step: plain data, as the trainer logs it (StepRecord.rollouts).

export interface SignalRollout {
  /** the rollouts of one prompt in one step form its group */
  promptId: string;
  reward: number;
  /** the correct_answer bit */
  correct: boolean;
  completionTokens: number;
  /** 'length': cut by a length limit before the stop token (max_tokens, or the model's context); absent in logs older than the field (then no clipped fraction is given) */
  stopReason?: 'stop' | 'length';
  /** b_i: the kernel baseline (GS1) or the group mean (GRPO) */
  baseline: number;
}

/** how the arm's advantages were estimated (the step record's `estimator`) */
export type SignalEstimator = 'group_mean' | 'kernel_cross_prompt_baseline';
