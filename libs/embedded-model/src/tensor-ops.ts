// Model building blocks with hand-written gradients where tfjs's own are slow on wasm: its matMul gradients
// use transposed-operand products, about 10x slower there than an explicit transpose followed by a plain product.
import { tf } from './tf-runtime';

type Grad = tf.GradSaveFunc;

/** C = A B; dA = dC B^T, dB = A^T dC, with explicit transposes */
export const matmul = tf.customGrad((...args: (tf.Tensor | Grad)[]) => {
  const [a, b, save] = args as [tf.Tensor2D, tf.Tensor2D, Grad];
  save([a, b]);
  return {
    value: tf.matMul(a, b),
    gradFunc: (dy: tf.Tensor, saved: tf.Tensor[]) => {
      const [sa, sb] = saved as [tf.Tensor2D, tf.Tensor2D];
      return [tf.matMul(dy as tf.Tensor2D, tf.transpose(sb)), tf.matMul(tf.transpose(sa), dy as tf.Tensor2D)];
    },
  };
}) as (a: tf.Tensor2D, b: tf.Tensor2D) => tf.Tensor2D;

/** C = A W for a frozen W: only dA = dC W^T flows back (no gradient is computed for W) */
export function matmulFrozen(a: tf.Tensor2D, w: tf.Tensor2D): tf.Tensor2D {
  const op = tf.customGrad((...args: (tf.Tensor | Grad)[]) => {
    const [x] = args as [tf.Tensor2D];
    return { value: tf.matMul(x, w), gradFunc: (dy: tf.Tensor) => [tf.matMul(dy as tf.Tensor2D, tf.transpose(w))] };
  }) as (x: tf.Tensor2D) => tf.Tensor2D;
  return op(a);
}

/** y = (x - mean) / sqrt(var + 1e-5) * g + b over the last axis of x [n, w] */
export function layerNorm(x: tf.Tensor2D, g: tf.Tensor, b: tf.Tensor): tf.Tensor2D {
  const mean = tf.mean(x, -1, true);
  const xc = tf.sub(x, mean);
  const variance = tf.mean(tf.square(xc), -1, true);
  return tf.add(tf.mul(tf.mul(xc, tf.rsqrt(tf.add(variance, 1e-5))), g), b) as tf.Tensor2D;
}

/** gelu(x) ~ x * sigmoid(1.702 x) (tanh is slow on wasm) */
export function gelu(x: tf.Tensor2D): tf.Tensor2D {
  return tf.mul(x, tf.sigmoid(tf.mul(x, 1.702))) as tf.Tensor2D;
}

export interface AttentionShape {
  batch: number;
  time: number;
  heads: number;
}

/** [B*T, H*d] -> [B*H, T, d] */
export function splitHeads(x: tf.Tensor, s: AttentionShape): tf.Tensor3D {
  const d = x.shape[x.shape.length - 1]! / s.heads;
  return tf.reshape(tf.transpose(tf.reshape(x, [s.batch, s.time, s.heads, d]), [0, 2, 1, 3]), [s.batch * s.heads, s.time, d]);
}

/** [B*T, H*d] -> [B*H, d, T] (keys, transposed for the score product) */
export function splitHeadsTransposed(x: tf.Tensor, s: AttentionShape): tf.Tensor3D {
  const d = x.shape[x.shape.length - 1]! / s.heads;
  return tf.reshape(tf.transpose(tf.reshape(x, [s.batch, s.time, s.heads, d]), [0, 2, 3, 1]), [s.batch * s.heads, d, s.time]);
}

/** [B*H, T, d] -> [B*T, H*d] */
export function mergeHeads(x: tf.Tensor3D, s: AttentionShape): tf.Tensor2D {
  const d = x.shape[2];
  return tf.reshape(tf.transpose(tf.reshape(x, [s.batch, s.heads, s.time, d]), [0, 2, 1, 3]), [s.batch * s.time, s.heads * d]);
}

export interface AttentionForward {
  out: tf.Tensor2D;
  /** keys [B*H, d, T] and values [B*H, T, d]: the KV cache of a prefill */
  kT: tf.Tensor3D;
  v: tf.Tensor3D;
  probs: tf.Tensor3D;
  q: tf.Tensor3D;
}

/**
 * softmax(q k^T / sqrt(d) + mask) v per head. q, k, v are [B*T, H*d]; mask is additive and broadcasts
 * to [B, H, T, T] (0 where attended, -1e9 where not).
 */
export function attentionForward(q2: tf.Tensor2D, k2: tf.Tensor2D, v2: tf.Tensor2D, s: AttentionShape, mask: tf.Tensor): AttentionForward {
  const d = q2.shape[1] / s.heads;
  const q = splitHeads(q2, s);
  const kT = splitHeadsTransposed(k2, s);
  const v = splitHeads(v2, s);
  const scores = tf.add(tf.reshape(tf.mul(tf.matMul(q, kT), 1 / Math.sqrt(d)), [s.batch, s.heads, s.time, s.time]), mask);
  const probs = tf.reshape(tf.softmax(scores), [s.batch * s.heads, s.time, s.time]) as tf.Tensor3D;
  const out = mergeHeads(tf.matMul(probs, v), s);
  return { out, kT, v, probs, q };
}

/** attention with a hand-written backward pass: dV = P^T dO, dS = P * (dO V^T - rowsum(P * dO V^T)), dQ = dS K / sqrt(d), dK = dS^T Q / sqrt(d) */
export function attention(q2: tf.Tensor2D, k2: tf.Tensor2D, v2: tf.Tensor2D, s: AttentionShape, mask: tf.Tensor): tf.Tensor2D {
  const op = tf.customGrad((...args: (tf.Tensor | Grad)[]) => {
    const [qi, ki, vi, save] = args as [tf.Tensor2D, tf.Tensor2D, tf.Tensor2D, Grad];
    const f = attentionForward(qi, ki, vi, s, mask);
    save([f.q, f.kT, f.v, f.probs]);
    return {
      value: f.out,
      gradFunc: (dy: tf.Tensor, saved: tf.Tensor[]) => {
        const [q, kT, v, p] = saved as [tf.Tensor3D, tf.Tensor3D, tf.Tensor3D, tf.Tensor3D];
        const scale = 1 / Math.sqrt(q.shape[2]);
        const dO = splitHeads(dy, s);
        const dV = tf.matMul(tf.transpose(p, [0, 2, 1]), dO);
        const dP = tf.matMul(dO, tf.transpose(v, [0, 2, 1]));
        const dS = tf.mul(p, tf.sub(dP, tf.sum(tf.mul(dP, p), -1, true))) as tf.Tensor3D;
        const dQ = tf.mul(tf.matMul(dS, tf.transpose(kT, [0, 2, 1])), scale) as tf.Tensor3D;
        const dK = tf.mul(tf.matMul(tf.transpose(dS, [0, 2, 1]), q), scale) as tf.Tensor3D;
        return [mergeHeads(dQ, s), mergeHeads(dK, s), mergeHeads(dV as tf.Tensor3D, s)];
      },
    };
  }) as (q: tf.Tensor2D, k: tf.Tensor2D, v: tf.Tensor2D) => tf.Tensor2D;
  return op(q2, k2, v2);
}

/** additive causal mask [T, T]: 0 on and below the diagonal, -1e9 above */
export function causalMask(time: number): tf.Tensor2D {
  const m = new Float32Array(time * time);
  for (let i = 0; i < time; i++) for (let j = i + 1; j < time; j++) m[i * time + j] = -1e9;
  return tf.tensor2d(m, [time, time]);
}
