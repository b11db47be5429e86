// Batched autoregressive sampling with a KV cache: prompts are left-padded into one batch, prefilled once,
// then decoded one token per step. Each row draws from its own seeded stream, so the same seed gives the same
// tokens; returned logprobs are those of the sampling policy (softmax(logits / T)), computed in float64.
import type { SampledSequence, SampleParams } from '@rx/backend';
import { Prng } from './prng';
import { tf } from './tf-runtime';
import { KvCache } from './kv-cache';
import { checkTokens, decodeStep, prefill, type ModelWeights } from './transformer';

/** rows decoded together; longer prompt lists are split into chunks of this many */
export const SAMPLE_CHUNK = 64;
const PAD = 0;

export interface SampleOptions extends SampleParams {
  /** stream index of the first row (row i draws from Prng(seed, firstStream + i)) */
  firstStream?: number;
}

let unseededCounter = 0;



/** Samples one completion per prompt (prompts may differ in length), in the order given. */
export function sampleBatch(w: ModelWeights, prompts: readonly (readonly number[])[], params: SampleOptions): SampledSequence[] {
  validateParams(params);
  prompts.forEach((p, i) => {
    if (p.length === 0) throw new Error(`prompt ${i} is empty`);
    checkTokens(w.cfg, p, `prompt ${i}`);
  });
  const seed = params.seed ?? Date.now() * 1000 + (unseededCounter++ % 1000);
  const first = params.firstStream ?? 0;
  // group prompts of similar length to cut padding; results go back in the caller's order
  const order = prompts.map((_, i) => i).sort((a, b) => prompts[a].length - prompts[b].length || a - b);
  const out: SampledSequence[] = new Array(prompts.length);
  for (let c = 0; c < order.length; c += SAMPLE_CHUNK) {
    const idx = order.slice(c, c + SAMPLE_CHUNK);
    const rows = sampleChunk(w, idx.map((i) => prompts[i]), params, idx.map((i) => new Prng(seed, first + i)));
    idx.forEach((i, j) => (out[i] = rows[j]));
  }
  return out;
}

function validateParams(p: SampleParams): void {
  if (!Number.isInteger(p.maxTokens) || p.maxTokens < 0) throw new Error(`maxTokens must be a non-negative integer, got ${p.maxTokens}`);
  if (!Number.isFinite(p.temperature) || p.temperature < 0) throw new Error(`temperature must be >= 0, got ${p.temperature}`);
  if (p.seed !== undefined && !Number.isSafeInteger(p.seed)) throw new Error(`seed must be a safe integer, got ${p.seed}`);
}

function sampleChunk(w: ModelWeights, prompts: readonly (readonly number[])[], params: SampleParams, rngs: Prng[]): SampledSequence[] {
  const batch = prompts.length;
  const { context, vocabSize } = w.cfg;
  const stop = new Set(params.stopTokens ?? []);
  const promptLen = Math.max(...prompts.map((p) => p.length));
  const pads = prompts.map((p) => promptLen - p.length);
  const budget = prompts.map((p) => Math.min(params.maxTokens, context - p.length));
  const maxNew = Math.max(0, ...budget);
  const results: SampledSequence[] = prompts.map(() => ({ tokens: [], logprobs: [], stopReason: 'length' }));
  const done = budget.map((b) => b <= 0);
  if (done.every(Boolean)) return results;

  const tokenData = new Int32Array(batch * promptLen);
  const posData = new Int32Array(batch * promptLen);
  prompts.forEach((p, b) => {
    for (let t = 0; t < promptLen; t++) {
      tokenData[b * promptLen + t] = t < pads[b] ? PAD : p[t - pads[b]];
      posData[b * promptLen + t] = Math.max(0, t - pads[b]);
    }
  });
  const cache = new KvCache(batch, w.cfg.heads, w.cfg.width, promptLen + maxNew, w.cfg.layers, pads);
  let logits = tf.tidy(() =>
    prefill(w, tf.tensor2d(tokenData, [batch, promptLen], 'int32'), tf.tensor2d(posData, [batch, promptLen], 'int32'), pads, cache),
  );
  for (;;) {
    const values = logits.dataSync() as Float32Array;
    logits.dispose();
    const nextTokens = new Int32Array(batch);
    const nextPos = new Int32Array(batch);
    for (let b = 0; b < batch; b++) {
      if (done[b]) {
        nextTokens[b] = PAD;
        nextPos[b] = context - 1;
        continue;
      }
      const { token, logprob } = drawToken(values.subarray(b * vocabSize, (b + 1) * vocabSize), params.temperature, rngs[b]);
      const r = results[b];
      r.tokens.push(token);
      r.logprobs.push(logprob);
      if (stop.has(token)) {
        r.stopReason = 'stop';
        done[b] = true;
      } else if (r.tokens.length >= budget[b]) done[b] = true;
      nextTokens[b] = token;
      nextPos[b] = Math.min(context - 1, prompts[b].length + r.tokens.length - 1);
    }
    if (done.every(Boolean)) break;
    logits = tf.tidy(() => decodeStep(w, tf.tensor1d(nextTokens, 'int32'), tf.tensor1d(nextPos, 'int32'), cache));
  }
  return results;
}

/** temperature 0: argmax with logprob log_softmax(logits)[argmax]; else a draw from softmax(logits / T) and its logprob */
export function drawToken(logits: ArrayLike<number>, temperature: number, rng: Prng): { token: number; logprob: number } {
  const n = logits.length;
  const t = temperature > 0 ? temperature : 1;
  let max = -Infinity;
  let argmax = 0;
  for (let i = 0; i < n; i++) {
    if (logits[i] > max) {
      max = logits[i];
      argmax = i;
    }
  }
  const probs = new Float64Array(n);
  let sum = 0;
  for (let i = 0; i < n; i++) {
    probs[i] = Math.exp((logits[i] - max) / t);
    sum += probs[i];
  }
  const logZ = Math.log(sum);
  let token = argmax;
  if (temperature > 0) {
    const u = rng.uniform() * sum;
    let acc = 0;
    for (let i = 0; i < n; i++) {
      if (probs[i] === 0) continue;
      token = i;
      acc += probs[i];
      if (u < acc) break;
    }
  }
  return { token, logprob: (logits[token] - max) / t - logZ };
}
