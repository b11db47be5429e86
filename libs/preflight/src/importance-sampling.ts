// The importance-sampling loss of Tinker's loss_fn='importance_sampling', in float64 over plain arrays.

/** What the loss needs of one Datum: per target position, the sampling logprob and the advantage. */
export interface LossInputs {
  samplingLogprobs: readonly number[];
  advantages: readonly number[];
}

/** L = -sum_d sum_t exp(logp_dt - logp_sampled_dt) * A_dt  (sum, no normalisation) */
export function importanceSamplingLoss(datums: readonly LossInputs[], logprobs: readonly (readonly number[])[]): number {
  let loss = 0;
  datums.forEach((datum, d) => {
    const lp = alignedLogprobs(datum, logprobs[d], d);
    for (let t = 0; t < lp.length; t++) loss -= Math.exp(lp[t] - datum.samplingLogprobs[t]) * datum.advantages[t];
  });
  return loss;
}

/** dL/dlogp_dt = -exp(logp_dt - logp_sampled_dt) * A_dt, flattened in datum then position order */
export function importanceSamplingGradient(datums: readonly LossInputs[], logprobs: readonly (readonly number[])[]): number[] {
  const grad: number[] = [];
  datums.forEach((datum, d) => {
    const lp = alignedLogprobs(datum, logprobs[d], d);
    for (let t = 0; t < lp.length; t++) grad.push(-Math.exp(lp[t] - datum.samplingLogprobs[t]) * datum.advantages[t]);
  });
  return grad;
}

function alignedLogprobs(datum: LossInputs, lp: readonly number[] | undefined, index: number): readonly number[] {
  if (!lp) throw new Error(`no logprobs for datum ${index}`);
  if (lp.length !== datum.samplingLogprobs.length || lp.length !== datum.advantages.length) {
    throw new Error(
      `datum ${index}: ${lp.length} logprobs for ${datum.samplingLogprobs.length} sampling logprobs and ${datum.advantages.length} advantages`,
    );
  }
  return lp;
}
