// Prompt + completion -> one Datum for loss_fn='importance_sampling', laid out as the tinker-cookbook does
// (/work/shared/notes/cookbook-reward.md): the sequence is prompt ++ completion; inputs drop its last token,
// targets drop its first; a target position inside the prompt carries logprob 0 and advantage 0 (masked);
// every completion token, the stop token included, carries the completion's sampling logprob and advantage.
import type { Datum } from '@rx/backend';

// s = p ++ c; input_t = s_t, target_t = s_{t+1}, t < |s| - 1;
// (logprob_t, A_t) = (l_{t+1-|p|}, A) if t + 1 >= |p| else (0, 0)
export function buildDatum(promptTokens: readonly number[], completionTokens: readonly number[], completionLogprobs: readonly number[], advantage: number): Datum {
  if (promptTokens.length < 1) throw new RangeError('a datum needs at least one prompt token');
  if (completionTokens.length !== completionLogprobs.length) {
    throw new RangeError(`${completionTokens.length} completion tokens but ${completionLogprobs.length} logprobs`);
  }
  if (!Number.isFinite(advantage)) throw new RangeError(`advantage must be finite, got ${advantage}`);
  const sequence = [...promptTokens, ...completionTokens];
  const promptTargets = promptTokens.length - 1; // targets that are prompt tokens (s_1 .. s_{|p|-1})
  const n = sequence.length - 1;
  const inputTokens = sequence.slice(0, n);
  const targetTokens = sequence.slice(1);
  const samplingLogprobs = new Array<number>(n).fill(0);
  const advantages = new Array<number>(n).fill(0);
  for (let k = 0; k < completionTokens.length; k++) {
    samplingLogprobs[promptTargets + k] = completionLogprobs[k];
    advantages[promptTargets + k] = advantage;
  }
  return { inputTokens, targetTokens, samplingLogprobs, advantages };
}
