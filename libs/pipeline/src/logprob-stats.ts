// The sampler/learner mismatch of a step, as the tinker-cookbook measures it (compute_kl_sample_train): over
// the completion tokens of every datum (the last `completionLength` target positions), d = sampling logprob -
// learner logprob from forward_backward.
import type { Datum } from '@rx/backend';
import type { TrainerLogprobStats } from '@rx/contracts';

// v1 = mean(d); v2 = 0.5 * mean(d^2); entropy = -mean(sampling logprob); over completion tokens
export function trainerLogprobStats(datums: readonly Datum[], completionLengths: readonly number[], learnerLogprobs: readonly (readonly number[])[]): TrainerLogprobStats | undefined {
  if (datums.length !== completionLengths.length || datums.length !== learnerLogprobs.length) return undefined;
  let n = 0;
  let sumDiff = 0;
  let sumSquaredDiff = 0;
  let sumSampling = 0;
  for (let i = 0; i < datums.length; i++) {
    const sampling = datums[i].samplingLogprobs;
    const learner = learnerLogprobs[i];
    if (learner.length !== sampling.length) return undefined;
    for (let t = sampling.length - completionLengths[i]; t < sampling.length; t++) {
      const d = sampling[t] - learner[t];
      sumDiff += d;
      sumSquaredDiff += d * d;
      sumSampling += sampling[t];
      n++;
    }
  }
  if (n === 0) return undefined;
  return { klSampleTrainV1: sumDiff / n, klSampleTrainV2: (0.5 * sumSquaredDiff) / n, entropy: -sumSampling / n, tokens: n };
}
