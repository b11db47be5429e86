// Independent reference for the datum layout (test only): walks target positions one at a time and decides
// from the position alone, with no slicing, what each field holds.
import type { Datum } from '@rx/backend';

export function referenceDatum(prompt: readonly number[], completion: readonly number[], logprobs: readonly number[], advantage: number): Datum {
  const total = prompt.length + completion.length;
  const d: Datum = { inputTokens: [], targetTokens: [], samplingLogprobs: [], advantages: [] };
  for (let t = 0; t + 1 < total; t++) {
    const at = (i: number): number => (i < prompt.length ? prompt[i] : completion[i - prompt.length]);
    d.inputTokens.push(at(t));
    d.targetTokens.push(at(t + 1));
    const targetIsCompletion = t + 1 >= prompt.length;
    d.samplingLogprobs.push(targetIsCompletion ? logprobs[t + 1 - prompt.length] : 0);
    d.advantages.push(targetIsCompletion ? advantage : 0);
  }
  return d;
}
