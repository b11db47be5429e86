// Losses and their gradients through the transformer: the importance-sampling loss of the RL trainer and the
// token cross-entropy of pretraining. Gradients come back as float32 arrays per trainable tensor.
import type { Datum } from '@rx/backend';
import type { TensorMap } from './param-set';
import { tf } from './tf-runtime';
import { checkTokens, forwardLogits, targetLogprobs, type ModelWeights } from './transformer';

const PAD = 0;

/** Right-padded flat batch: N = rows * time positions. */
export interface PaddedBatch {
  rows: number;
  time: number;
  lengths: number[];
  inputs: Int32Array;
  targets: Int32Array;
  /** per position: sampling logprob (IS loss) */
  samplingLogprobs: Float32Array;
  /** per position: advantage (IS loss) or token weight (cross-entropy); 0 on padding */
  weights: Float32Array;
}

export function padDatums(w: ModelWeights, datums: readonly Datum[]): PaddedBatch {
  if (datums.length === 0) throw new Error('forwardBackward needs at least one datum');
  datums.forEach((d, i) => {
    const n = d.inputTokens.length;
    if (n === 0) throw new Error(`datum ${i} has no input tokens`);
    if (d.targetTokens.length !== n || d.samplingLogprobs.length !== n || d.advantages.length !== n) {
      throw new Error(
        `datum ${i}: inputTokens (${n}), targetTokens (${d.targetTokens.length}), samplingLogprobs (${d.samplingLogprobs.length}) and advantages (${d.advantages.length}) must have the same length`,
      );
    }
    checkTokens(w.cfg, d.inputTokens, `datum ${i} inputTokens`);
    checkTokens(w.cfg, d.targetTokens, `datum ${i} targetTokens`);
    d.samplingLogprobs.forEach((x, t) => {
      if (!Number.isFinite(x)) throw new Error(`datum ${i}: samplingLogprobs[${t}] is not finite (${x})`);
    });
    d.advantages.forEach((x, t) => {
      if (!Number.isFinite(x)) throw new Error(`datum ${i}: advantages[${t}] is not finite (${x})`);
    });
  });
  const rows = datums.length;
  const lengths = datums.map((d) => d.inputTokens.length);
  const time = Math.max(...lengths);
  const b: PaddedBatch = {
    rows,
    time,
    lengths,
    inputs: new Int32Array(rows * time).fill(PAD),
    targets: new Int32Array(rows * time).fill(PAD),
    samplingLogprobs: new Float32Array(rows * time),
    weights: new Float32Array(rows * time),
  };
  datums.forEach((d, r) => {
    b.inputs.set(d.inputTokens, r * time);
    b.targets.set(d.targetTokens, r * time);
    b.samplingLogprobs.set(d.samplingLogprobs, r * time);
    b.weights.set(d.advantages, r * time);
  });
  return b;
}

export interface LossAndGrads {
  loss: number;
  /** training-policy logprob of each target, per row, trimmed to the row's length */
  logprobs: number[][];
  grads: Record<string, Float32Array>;
}

export type LossKind = 'importance_sampling' | 'cross_entropy';

/** A loss over a padded batch's flat per-position tensors: target logprobs, sampling logprobs, advantages (0 on padding). */
export type PositionLoss = (lp: tf.Tensor1D, sampled: tf.Tensor1D, advantages: tf.Tensor1D) => tf.Scalar;

// L = -sum_t exp(logp_t - logp_sampled_t) * A_t  (sum, no normalisation)
export const importanceSamplingPositionLoss: PositionLoss = (lp, sampled, advantages) => tf.neg(tf.sum(tf.mul(tf.exp(tf.sub(lp, sampled)), advantages))) as tf.Scalar;

/**
 * Loss and gradient w.r.t. the tensors in `trainable` (which must be the tensors the weights use).
 * importance_sampling: L = -sum_t exp(logp_t - logp_sampled_t) * A_t (sum, no normalisation; A = 0 on prompt and padding).
 * cross_entropy: L = -sum_t w_t logp_t / sum_t w_t.
 * A PositionLoss gives the loss of the per-position tensors directly.
 */
export function lossAndGrads(w: ModelWeights, trainable: TensorMap, batch: PaddedBatch, kind: LossKind | PositionLoss): LossAndGrads {
  const names = Object.keys(trainable);
  let lpKept: tf.Tensor1D | null = null;
  const result = tf.tidy(() => {
    const inputs = tf.tensor2d(batch.inputs, [batch.rows, batch.time], 'int32');
    const targets = tf.tensor1d(batch.targets, 'int32');
    const weights = tf.tensor1d(batch.weights, 'float32');
    const sampled = tf.tensor1d(batch.samplingLogprobs, 'float32');
    const f = () => {
      const lp = targetLogprobs(forwardLogits(w, inputs), targets);
      lpKept = tf.keep(lp);
      if (typeof kind === 'function') return kind(lp, sampled, weights);
      if (kind === 'importance_sampling') return importanceSamplingPositionLoss(lp, sampled, weights);
      const total = batch.weights.reduce((a, x) => a + x, 0);
      if (!(total > 0)) throw new Error('cross-entropy batch has no weighted positions');
      return tf.div(tf.neg(tf.sum(tf.mul(lp, weights))), total) as tf.Scalar;
    };
    const { value, grads } = tf.valueAndGrads(f)(names.map((n) => trainable[n]));
    return { value, grads };
  });
  try {
    const lpData = (lpKept as tf.Tensor1D | null)?.dataSync();
    if (!lpData) throw new Error('forward pass produced no logprobs');
    const logprobs = batch.lengths.map((n, r) => Array.from(lpData.subarray(r * batch.time, r * batch.time + n)));
    const grads: Record<string, Float32Array> = {};
    names.forEach((n, i) => (grads[n] = result.grads[i].dataSync() as Float32Array));
    return { loss: result.value.dataSync()[0], logprobs, grads };
  } finally {
    (lpKept as tf.Tensor1D | null)?.dispose();
    result.value.dispose();
    result.grads.forEach((g) => g.dispose());
  }
}

/** Logprob of each token given the ones before it (first entry null), with a full forward pass. */
export function sequenceLogprobs(w: ModelWeights, tokens: readonly number[]): (number | null)[] {
  checkTokens(w.cfg, tokens, 'computeLogprobs tokens');
  if (tokens.length === 0) return [];
  if (tokens.length === 1) return [null];
  const lp = tf.tidy(() => {
    const inputs = tf.tensor2d(tokens.slice(0, -1), [1, tokens.length - 1], 'int32');
    return targetLogprobs(forwardLogits(w, inputs), tf.tensor1d(tokens.slice(1), 'int32')).dataSync();
  });
  return [null, ...Array.from(lp)];
}
