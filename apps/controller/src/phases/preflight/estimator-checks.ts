// Preflight (a): the advantage stage of the loop (libs/pipeline computeAdvantages, the code the advantage
// service runs) on synthetic float64 rewards. Forced activation: heterogeneous phi gives a non-constant b_i that
// tracks each prompt kind's success rate. Forced non-activation: a huge bandwidth gives b_i = the leave-one-out
// window mean (a batch-mean REINFORCE baseline), checked against plain loops to 1e-12.
import { computeAdvantages, InMemoryRolloutWindowStore } from '@rx/pipeline';
import type { StepPlan } from '@rx/contracts';
import { heterogeneousKernelBatch } from './fixed-batch';
import { sha256Json } from '@rx/run-dir';

export interface ActivationCheck {
  bandwidth: number;
  batch_sha256: string;
  /** population std of b_i over the batch */
  baseline_std: number;
  /** mean b_i over the rollouts of each prompt kind (success rates 0.9 and 0.1) */
  baseline_mean_easy: number;
  baseline_mean_hard: number;
  pass: boolean;
  detail: string;
}

export interface NonActivationCheck {
  bandwidth: number;
  batch_sha256: string;
  /** max over i of |b_i - mean_{j != i} r_j| */
  max_abs_error: number;
  tolerance: number;
  pass: boolean;
  detail: string;
}

export interface EstimatorChecks {
  forced_activation: ActivationCheck;
  forced_non_activation: NonActivationCheck;
  pass: boolean;
}

const kernelPlan = (bandwidth: number): StepPlan => ({
  baseModel: 'preflight/none',
  groupSize: 1,
  sampling: { maxTokens: 1, temperature: 1, seed: 0 },
  advantage: { estimator: 'kernel_cross_prompt_baseline', bandwidth, windowSize: 256 },
  learningRate: 1e-5,
  formatCoef: 0.1,
});

// mean = (1/n) sum x; std = sqrt((1/n) sum (x - mean)^2)
function meanStd(xs: readonly number[]): { mean: number; std: number } {
  let s = 0;
  for (const x of xs) s += x;
  const mean = s / xs.length;
  let v = 0;
  for (const x of xs) v += (x - mean) * (x - mean);
  return { mean, std: Math.sqrt(v / xs.length) };
}

export async function runEstimatorChecks(preRegisteredBandwidth: number): Promise<EstimatorChecks> {
  // forced activation: the pre-registered bandwidth on two far-apart prompt kinds
  const active = heterogeneousKernelBatch(kernelPlan(preRegisteredBandwidth));
  const activeOut = await computeAdvantages(active.batch, { windows: new InMemoryRolloutWindowStore() });
  const b = activeOut.rollouts.map((r) => r.baseline);
  const easy = meanStd(b.filter((_, i) => active.kindRate[i] > 0.5)).mean;
  const hard = meanStd(b.filter((_, i) => active.kindRate[i] < 0.5)).mean;
  const std = meanStd(b).std;
  // non-constant, and each kind's baseline sits nearer its own success rate than the other kind's
  const activationPass = std > 0.1 && Math.abs(easy - 0.9) < Math.abs(easy - 0.1) && Math.abs(hard - 0.1) < Math.abs(hard - 0.9);
  const forced_activation: ActivationCheck = {
    bandwidth: preRegisteredBandwidth,
    batch_sha256: sha256Json(active.batch),
    baseline_std: std,
    baseline_mean_easy: easy,
    baseline_mean_hard: hard,
    pass: activationPass,
    detail: `std(b) ${std.toFixed(4)} (needs > 0.1); mean b easy ${easy.toFixed(4)} (rate 0.9), hard ${hard.toFixed(4)} (rate 0.1)`,
  };

  // forced non-activation: h = 1e6 flattens every weight to 1
  const huge = 1e6;
  const flat = heterogeneousKernelBatch(kernelPlan(huge));
  const flatOut = await computeAdvantages(flat.batch, { windows: new InMemoryRolloutWindowStore() });
  const rewards = flat.batch.rollouts.map((r) => r.reward);
  let maxErr = 0;
  flatOut.rollouts.forEach((r, i) => {
    // leave-one-out window mean: (sum_j r_j - r_i) / (n - 1), summed by a plain loop
    let sum = 0;
    for (let j = 0; j < rewards.length; j++) if (j !== i) sum += rewards[j];
    const err = Math.abs(r.baseline - sum / (rewards.length - 1));
    if (!(err <= maxErr)) maxErr = err;
  });
  const tolerance = 1e-12;
  const forced_non_activation: NonActivationCheck = {
    bandwidth: huge,
    batch_sha256: sha256Json(flat.batch),
    max_abs_error: maxErr,
    tolerance,
    pass: maxErr <= tolerance,
    detail: `max |b_i - leave-one-out mean| = ${maxErr.toExponential(3)} (needs <= ${tolerance})`,
  };
  return { forced_activation, forced_non_activation, pass: forced_activation.pass && forced_non_activation.pass };
}
