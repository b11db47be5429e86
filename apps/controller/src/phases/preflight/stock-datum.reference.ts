// The stock (tinker-cookbook) Datum layout, written independently of libs/pipeline's buildDatum for the
// preflight: the sequence is prompt ++ completion; model_input drops its last token, targets drop its first;
// logprobs and advantages are 0 on the len(prompt) - 1 prompt targets, then the completion's values.
import type { Datum } from '@rx/backend';

// tokens = p ++ c; input = tokens[:-1]; target = tokens[1:]; logprobs = [0]*(|p|-1) ++ l; advantages = [0]*(|p|-1) ++ [A]*|c|
export function stockDatum(prompt: readonly number[], completion: readonly number[], logprobs: readonly number[], advantage: number): Datum {
  const tokens = prompt.concat(completion);
  const padding: number[] = [];
  for (let k = 0; k < prompt.length - 1; k++) padding.push(0);
  const advantages: number[] = [];
  for (let k = 0; k < completion.length; k++) advantages.push(advantage);
  return {
    inputTokens: tokens.slice(0, tokens.length - 1),
    targetTokens: tokens.slice(1),
    samplingLogprobs: padding.concat(logprobs),
    advantages: padding.concat(advantages),
  };
}

// stock group-mean advantage (cookbook compute_advantages): A_i = r_i - mean(r of i's group), plain loops
export function stockGroupMeanAdvantages(rewards: readonly number[], groups: readonly string[]): number[] {
  const out: number[] = [];
  for (let i = 0; i < rewards.length; i++) {
    let sum = 0;
    let n = 0;
    for (let j = 0; j < rewards.length; j++) {
      if (groups[j] === groups[i]) {
        sum += rewards[j];
        n++;
      }
    }
    out.push(rewards[i] - sum / n);
  }
  return out;
}
