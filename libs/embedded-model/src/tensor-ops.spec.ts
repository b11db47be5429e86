import { referenceAttention } from './attention.reference';
import { KvCache } from './kv-cache';
import { Prng } from './prng';
import { attention, attentionLeftPadded, causalMask } from './tensor-ops';
import { ensureTfWasm, tf } from './tf-runtime';

function randn(n: number, seed: number): Float32Array {
  const rng = new Prng(seed);
  return Float32Array.from({ length: n }, () => rng.normal());
}

describe('attention', () => {
  beforeAll(() => ensureTfWasm());
  const B = 3;
  const T = 7;
  const H = 2;
  const W = 8;

  it('matches the batched autograd reference in value and in gradient (float32: 1e-5)', () => {
    const [q, k, v] = [1, 2, 3].map((s) => tf.tensor2d(randn(B * T * W, s), [B * T, W]));
    const dy = tf.tensor2d(randn(B * T * W, 4), [B * T, W]);
    const ours = tf.tidy(() => {
      const f = (a: tf.Tensor, b: tf.Tensor, c: tf.Tensor) => tf.sum(tf.mul(attention(a as tf.Tensor2D, b as tf.Tensor2D, c as tf.Tensor2D, { batch: B, time: T, heads: H }, causalMask(T)), dy));
      return [attention(q, k, v, { batch: B, time: T, heads: H }, causalMask(T)), ...tf.grads(f)([q, k, v])];
    });
    const ref = tf.tidy(() => {
      const f = (a: tf.Tensor, b: tf.Tensor, c: tf.Tensor) => tf.sum(tf.mul(referenceAttention(a as tf.Tensor2D, b as tf.Tensor2D, c as tf.Tensor2D, B, T, H), dy));
      return [referenceAttention(q, k, v, B, T, H), ...tf.grads(f)([q, k, v])];
    });
    ours.forEach((t, i) => {
      const a = t.dataSync();
      const r = ref[i].dataSync();
      let maxErr = 0;
      for (let j = 0; j < a.length; j++) maxErr = Math.max(maxErr, Math.abs(a[j] - r[j]));
      expect(maxErr).toBeLessThan(1e-5);
    });
    tf.dispose([q, k, v, dy, ...ours, ...ref]);
  });

  it('gives left-padded rows the attention of their unpadded sequence, and the KV cache the same for a new query', () => {
    const pads = [0, 3, 5];
    const [qa, ka, va] = [5, 6, 7].map((s) => randn(B * T * W, s));
    const padded = attentionLeftPadded(qa, ka, va, { batch: B, time: T, heads: H }, W, pads);
    pads.forEach((pad, b) => {
      const n = T - pad;
      const rows = (x: Float32Array) => tf.tensor2d(x.subarray((b * T + pad) * W, (b + 1) * T * W), [n, W]);
      const alone = tf.tidy(() => referenceAttention(rows(qa), rows(ka), rows(va), 1, n, H).dataSync());
      for (let j = 0; j < n * W; j++) expect(Math.abs(padded[(b * T + pad) * W + j] - alone[j])).toBeLessThan(1e-5);
    });
    // the cached keys/values of positions 0..T-1 answer the query at the last position as the full pass did
    const cache = new KvCache(B, H, W, T, 1, pads);
    cache.write(0, 0, T, ka, va);
    const lastQ = new Float32Array(B * W);
    for (let b = 0; b < B; b++) lastQ.set(qa.subarray((b * T + T - 1) * W, (b * T + T) * W), b * W);
    const step = cache.attend(0, lastQ, T);
    for (let b = 0; b < B; b++) for (let j = 0; j < W; j++) expect(Math.abs(step[b * W + j] - padded[(b * T + T - 1) * W + j])).toBeLessThan(1e-5);
  });
});
