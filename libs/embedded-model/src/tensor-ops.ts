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

/** head h of row b of x [B*T, W] as a [T, d] array times `mul`, or transposed to [d, T] */
export function headSlice(x: Float32Array, s: AttentionShape, width: number, b: number, h: number, transposed: boolean, mul = 1): Float32Array {
  const T = s.time;
  const d = width / s.heads;
  const out = new Float32Array(T * d);
  for (let t = 0; t < T; t++) {
    const src = (b * T + t) * width + h * d;
    if (transposed) for (let j = 0; j < d; j++) out[j * T + t] = x[src + j] * mul;
    else for (let j = 0; j < d; j++) out[t * d + j] = x[src + j] * mul;
  }
  return out;
}

/** per-(b, h) [T, d] arrays (index b * H + h) back to one [B*T, W] array */
export function mergeHeadSlices(parts: Float32Array[], s: AttentionShape, width: number): Float32Array {
  const T = s.time;
  const d = width / s.heads;
  const out = new Float32Array(s.batch * T * width);
  parts.forEach((p, i) => {
    const b = Math.floor(i / s.heads);
    const h = i % s.heads;
    for (let t = 0; t < T; t++) out.set(p.subarray(t * d, (t + 1) * d), (b * T + t) * width + h * d);
  });
  return out;
}

interface SlicedForward {
  out: Float32Array;
  /** softmax probabilities per (b, h), kept only when asked */
  probs: tf.Tensor2D[];
}

/**
 * softmax(q k^T / sqrt(d) + mask_b) v for each batch row b and head h, with 2-D products: wasm's batched
 * matMul runs ~5x slower than its 2-D matMul on these shapes, and slicing a tensor on wasm copies the whole
 * tensor, so per-head operands are built from host arrays.
 */
function slicedForward(qa: Float32Array, ka: Float32Array, va: Float32Array, s: AttentionShape, width: number, maskFor: (b: number) => tf.Tensor2D, keepProbs: boolean): SlicedForward {
  const { time: T, heads: H } = s;
  const d = width / H;
  const scale = 1 / Math.sqrt(d);
  const outs: Float32Array[] = [];
  const probs: tf.Tensor2D[] = [];
  for (let b = 0; b < s.batch; b++) {
    const mask = maskFor(b);
    for (let h = 0; h < H; h++) {
      const p = tf.tidy(() => {
        const q = tf.tensor2d(headSlice(qa, s, width, b, h, false, scale), [T, d]);
        const kT = tf.tensor2d(headSlice(ka, s, width, b, h, true), [d, T]);
        return tf.softmax(tf.add(tf.matMul(q, kT), mask)) as tf.Tensor2D;
      });
      const o = tf.tidy(() => tf.matMul(p, tf.tensor2d(headSlice(va, s, width, b, h, false), [T, d])));
      outs.push(o.dataSync() as Float32Array);
      o.dispose();
      if (keepProbs) probs.push(p);
      else p.dispose();
    }
  }
  return { out: mergeHeadSlices(outs, s, width), probs };
}

/**
 * Causal attention for training, q, k, v [B*T, W] -> [B*T, W], with a hand-written backward pass:
 * dV = P^T dO, dS = P * (dO V^T - rowsum(P * dO V^T)), dQ = dS K / sqrt(d), dK = dS^T Q / sqrt(d).
 */
export function attention(q2: tf.Tensor2D, k2: tf.Tensor2D, v2: tf.Tensor2D, s: AttentionShape, mask: tf.Tensor2D): tf.Tensor2D {
  const { time: T, heads: H } = s;
  const W = q2.shape[1];
  const d = W / H;
  const scale = 1 / Math.sqrt(d);
  const op = tf.customGrad((...args: (tf.Tensor | Grad)[]) => {
    const [qi, ki, vi, save] = args as [tf.Tensor2D, tf.Tensor2D, tf.Tensor2D, Grad];
    const qa = qi.dataSync() as Float32Array;
    const ka = ki.dataSync() as Float32Array;
    const va = vi.dataSync() as Float32Array;
    const f = slicedForward(qa, ka, va, s, W, () => mask, true);
    const pAll = tf.stack(f.probs);
    tf.dispose(f.probs);
    save([pAll]);
    return {
      value: tf.tensor2d(f.out, [s.batch * T, W]),
      gradFunc: (dy: tf.Tensor, saved: tf.Tensor[]) => {
        const pa = saved[0].dataSync() as Float32Array;
        const dya = dy.dataSync() as Float32Array;
        const dq: Float32Array[] = [];
        const dk: Float32Array[] = [];
        const dv: Float32Array[] = [];
        for (let b = 0; b < s.batch; b++) {
          for (let h = 0; h < H; h++) {
            const i = b * H + h;
            const grads = tf.tidy(() => {
              const p = tf.tensor2d(pa.subarray(i * T * T, (i + 1) * T * T), [T, T]);
              const dO = tf.tensor2d(headSlice(dya, s, W, b, h, false), [T, d]);
              const dV = tf.matMul(tf.transpose(p), dO);
              const dP = tf.matMul(dO, tf.tensor2d(headSlice(va, s, W, b, h, true), [d, T]));
              const dS = tf.mul(p, tf.sub(dP, tf.sum(tf.mul(dP, p), -1, true))) as tf.Tensor2D;
              const dQ = tf.matMul(dS, tf.tensor2d(headSlice(ka, s, W, b, h, false, scale), [T, d]));
              const dK = tf.matMul(tf.transpose(dS), tf.tensor2d(headSlice(qa, s, W, b, h, false, scale), [T, d]));
              return [dQ, dK, dV];
            });
            // read outside tidy: tidy walks its result, and walking a typed array visits every element
            dq.push(grads[0].dataSync() as Float32Array);
            dk.push(grads[1].dataSync() as Float32Array);
            dv.push(grads[2].dataSync() as Float32Array);
            tf.dispose(grads);
          }
        }
        const n = s.batch * T;
        return [tf.tensor2d(mergeHeadSlices(dq, s, W), [n, W]), tf.tensor2d(mergeHeadSlices(dk, s, W), [n, W]), tf.tensor2d(mergeHeadSlices(dv, s, W), [n, W])];
      },
    };
  }) as (q: tf.Tensor2D, k: tf.Tensor2D, v: tf.Tensor2D) => tf.Tensor2D;
  return op(q2, k2, v2);
}

/** Inference attention over left-padded rows (row b has pads[b] padding positions first): q, k, v as host arrays [B*T, W]. */
export function attentionLeftPadded(qa: Float32Array, ka: Float32Array, va: Float32Array, s: AttentionShape, width: number, pads: readonly number[]): Float32Array {
  const masks = new Map<number, tf.Tensor2D>();
  try {
    return slicedForward(qa, ka, va, s, width, (b) => {
      let m = masks.get(pads[b]);
      if (!m) masks.set(pads[b], (m = paddedCausalMask(s.time, pads[b])));
      return m;
    }, false).out;
  } finally {
    tf.dispose([...masks.values()]);
  }
}

/** additive causal mask [T, T]: 0 on and below the diagonal, -1e9 above */
export function causalMask(time: number): tf.Tensor2D {
  return paddedCausalMask(time, 0);
}

/** causal mask that also hides the first `pad` key positions */
function paddedCausalMask(time: number, pad: number): tf.Tensor2D {
  const m = new Float32Array(time * time);
  for (let i = 0; i < time; i++) for (let j = 0; j < time; j++) if (j > i || j < pad) m[i * time + j] = -1e9;
  return tf.tensor2d(m, [time, time]);
}
