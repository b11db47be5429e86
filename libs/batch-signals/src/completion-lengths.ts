// Completion lengths of a step: the share cut by a length limit (stop reason 'length': max_tokens, or prompt plus completion reaching the context max_seq_len), the mean and the longest.
import type { SignalRollout } from './signal-rollout';

export interface CompletionLengths {
  /** #{stopReason = 'length'} / #rollouts; null when a rollout's stop reason was not logged (0 for no rollout) */
  clippedFraction: number | null;
  /** mean completion tokens (0 for no rollout) */
  mean: number;
  /** the longest completion in tokens (0 for no rollout) */
  max: number;
}

export function completionLengths(rollouts: readonly SignalRollout[]): CompletionLengths {
  const n = rollouts.length;
  if (n === 0) return { clippedFraction: 0, mean: 0, max: 0 };
  const known = rollouts.every((r) => r.stopReason !== undefined);
  return {
    clippedFraction: known ? rollouts.filter((r) => r.stopReason === 'length').length / n : null,
    mean: rollouts.reduce((s, r) => s + r.completionTokens, 0) / n,
    max: rollouts.reduce((m, r) => Math.max(m, r.completionTokens), 0),
  };
}
