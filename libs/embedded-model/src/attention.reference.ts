// Independent reference for the attention of tensor-ops.ts: batched products over [B*H, T, d] with tfjs's own
// ops and autograd (no hand-written gradient), for tests only.
import { tf } from './tf-runtime';

/** softmax(q k^T / sqrt(d) + causal) v per head, q, k, v [B*T, H*d] */
export function referenceAttention(q: tf.Tensor2D, k: tf.Tensor2D, v: tf.Tensor2D, batch: number, time: number, heads: number): tf.Tensor2D {
  const width = q.shape[1];
  const d = width / heads;
  const split = (x: tf.Tensor2D) => tf.transpose(tf.reshape(x, [batch, time, heads, d]), [0, 2, 1, 3]);
  const scores = tf.div(tf.matMul(split(q), split(k), false, true), Math.sqrt(d));
  const causal = tf.linalg.bandPart(tf.ones([time, time]), -1, 0);
  const masked = tf.where(tf.cast(causal, 'bool'), scores, tf.fill(scores.shape, -1e9));
  const out = tf.matMul(tf.softmax(masked), split(v));
  return tf.reshape(tf.transpose(out, [0, 2, 1, 3]), [batch * time, width]);
}
