// The decoder-only transformer: token one-hot embedding (tf.gather's gradient needs a kernel wasm lacks),
// learned absolute positions, pre-LayerNorm blocks (causal multi-head attention, GELU MLP), final LayerNorm and
// an output head. Projections optionally carry LoRA adapters: y = x W + (alpha / r) (x A) B.
import { tf } from './tf-runtime';
import { attention, attentionForward, causalMask, gelu, layerNorm, matmul, matmulFrozen, type AttentionShape } from './tensor-ops';
import type { TensorMap } from './param-set';
import type { LoraTarget, TransformerConfig } from './transformer-config';

export interface ModelWeights {
  cfg: TransformerConfig;
  base: TensorMap;
  /** `<l>.<target>.lora_a` / `.lora_b` tensors; absent for the plain base model */
  lora?: TensorMap;
  loraScale: number;
  /** true when the base weights are being trained (pretraining): their gradients are computed */
  trainBase: boolean;
}

function weight(map: TensorMap, name: string): tf.Tensor2D {
  const t = map[name];
  if (!t) throw new Error(`missing model tensor ${name}`);
  return t as tf.Tensor2D;
}

function baseMatmul(w: ModelWeights, x: tf.Tensor2D, name: string): tf.Tensor2D {
  return w.trainBase ? matmul(x, weight(w.base, name)) : matmulFrozen(x, weight(w.base, name));
}

/** x W_l.t, plus the LoRA term when adapters are present */
function project(w: ModelWeights, x: tf.Tensor2D, layer: number, target: LoraTarget): tf.Tensor2D {
  const name = `l${layer}.${target}`;
  const y = baseMatmul(w, x, name);
  if (!w.lora) return y;
  const a = weight(w.lora, `${name}.lora_a`);
  const b = weight(w.lora, `${name}.lora_b`);
  return tf.add(y, tf.mul(matmul(matmul(x, a), b), w.loraScale));
}

/** float32 one-hot rows; wasm's OneHot kernel returns zeros when asked for float32 output, so build int32 and cast */
function oneHotFloat(indices: tf.Tensor1D, depth: number): tf.Tensor2D {
  return tf.cast(tf.oneHot(indices, depth), 'float32') as tf.Tensor2D;
}

function embed(w: ModelWeights, tokens: tf.Tensor2D, positions: tf.Tensor2D | null): tf.Tensor2D {
  const [batch, time] = tokens.shape;
  const { vocabSize, width } = w.cfg;
  const oneHot = oneHotFloat(tf.reshape(tokens, [batch * time]) as tf.Tensor1D, vocabSize);
  const tok = tf.reshape(baseMatmul(w, oneHot, 'tok_emb'), [batch, time, width]);
  const pos = positions
    ? tf.reshape(tf.gather(weight(w.base, 'pos_emb'), tf.reshape(positions, [batch * time])), [batch, time, width])
    : tf.slice(weight(w.base, 'pos_emb'), [0, 0], [time, width]);
  return tf.reshape(tf.add(tok, pos), [batch * time, width]);
}

function mlp(w: ModelWeights, x: tf.Tensor2D, l: number): tf.Tensor2D {
  const h = layerNorm(x, w.base[`l${l}.ln2.g`], w.base[`l${l}.ln2.b`]);
  const f = gelu(tf.add(project(w, h, l, 'fc1'), w.base[`l${l}.fc1.bias`]) as tf.Tensor2D);
  return project(w, f, l, 'fc2');
}

function outputLogits(w: ModelWeights, x: tf.Tensor2D): tf.Tensor2D {
  const h = layerNorm(x, w.base['lnf.g'], w.base['lnf.b']);
  return baseMatmul(w, h, 'head');
}

export function checkTokens(cfg: TransformerConfig, tokens: readonly number[], what: string): void {
  if (tokens.length > cfg.context) throw new Error(`${what}: ${tokens.length} tokens exceed the model context of ${cfg.context}`);
  for (const t of tokens) {
    if (!Number.isInteger(t) || t < 0 || t >= cfg.vocabSize) throw new Error(`${what}: token ${t} is outside the vocabulary (0..${cfg.vocabSize - 1})`);
  }
}

/**
 * Training forward pass over right-padded rows: logits [B*T, V] for tokens [B, T] (int32). Differentiable
 * (custom gradients for products and attention); call inside tf.tidy or a gradient function.
 */
export function forwardLogits(w: ModelWeights, tokens: tf.Tensor2D, mask?: tf.Tensor2D): tf.Tensor2D {
  const [batch, time] = tokens.shape;
  if (time > w.cfg.context) throw new Error(`sequence of ${time} tokens exceeds the model context of ${w.cfg.context}`);
  const shape: AttentionShape = { batch, time, heads: w.cfg.heads };
  const causal = mask ?? causalMask(time);
  let x = embed(w, tokens, null);
  for (let l = 0; l < w.cfg.layers; l++) {
    const h = layerNorm(x, w.base[`l${l}.ln1.g`], w.base[`l${l}.ln1.b`]);
    const a = attention(project(w, h, l, 'wq'), project(w, h, l, 'wk'), project(w, h, l, 'wv'), shape, causal);
    x = tf.add(x, project(w, a, l, 'wo'));
    x = tf.add(x, mlp(w, x, l));
  }
  return outputLogits(w, x);
}

/** logprob of each target under logits [N, V]: log_softmax(logits)[target], as [N] */
export function targetLogprobs(logits: tf.Tensor2D, targets: tf.Tensor1D): tf.Tensor1D {
  const logp = tf.logSoftmax(logits);
  const oneHot = oneHotFloat(targets, logits.shape[1]);
  return tf.sum(tf.mul(logp, oneHot), -1) as tf.Tensor1D;
}

/** Per-layer KV cache: keys transposed [B*H, d, t] and values [B*H, t, d]. */
export interface KvCache {
  kT: tf.Tensor3D;
  v: tf.Tensor3D;
}

export interface PrefillResult {
  /** logits of the next token after the last prompt position, [B, V] */
  lastLogits: tf.Tensor2D;
  cache: KvCache[];
}

/**
 * Inference over left-padded prompts [B, T]: positions [B, T] count from each row's first real token, and the
 * additive key mask [B, 1, 1, T] hides the padding. Returns the last position's logits and the KV cache.
 */
export function prefill(w: ModelWeights, tokens: tf.Tensor2D, positions: tf.Tensor2D, keyMask: tf.Tensor4D): PrefillResult {
  const [batch, time] = tokens.shape;
  const shape: AttentionShape = { batch, time, heads: w.cfg.heads };
  const mask = tf.add(causalMask(time), keyMask);
  let x = embed(w, tokens, positions);
  const cache: KvCache[] = [];
  for (let l = 0; l < w.cfg.layers; l++) {
    const h = layerNorm(x, w.base[`l${l}.ln1.g`], w.base[`l${l}.ln1.b`]);
    const f = attentionForward(project(w, h, l, 'wq'), project(w, h, l, 'wk'), project(w, h, l, 'wv'), shape, mask);
    cache.push({ kT: f.kT, v: f.v });
    x = tf.add(x, project(w, f.out, l, 'wo'));
    x = tf.add(x, mlp(w, x, l));
  }
  const last = tf.reshape(tf.slice(tf.reshape(x, [batch, time, w.cfg.width]), [0, time - 1, 0], [batch, 1, w.cfg.width]), [batch, w.cfg.width]);
  return { lastLogits: outputLogits(w, last as tf.Tensor2D), cache };
}

/**
 * One decoding step with the KV cache: tokens [B] at positions [B]; keyMask [B, 1, 1, t+1] covers the cache
 * plus the new position. Returns the next logits [B, V] and the extended cache.
 */
export function decodeStep(w: ModelWeights, tokens: tf.Tensor1D, positions: tf.Tensor1D, cache: KvCache[], keyMask: tf.Tensor4D): PrefillResult {
  const batch = tokens.shape[0];
  const { heads, width } = w.cfg;
  const d = width / heads;
  let x = embed(w, tf.reshape(tokens, [batch, 1]), tf.reshape(positions, [batch, 1]));
  const next: KvCache[] = [];
  for (let l = 0; l < w.cfg.layers; l++) {
    const h = layerNorm(x, w.base[`l${l}.ln1.g`], w.base[`l${l}.ln1.b`]);
    const q = tf.reshape(project(w, h, l, 'wq'), [batch * heads, 1, d]);
    const k = tf.reshape(project(w, h, l, 'wk'), [batch * heads, d, 1]);
    const v = tf.reshape(project(w, h, l, 'wv'), [batch * heads, 1, d]);
    const kT = tf.concat([cache[l].kT, k], 2) as tf.Tensor3D;
    const vs = tf.concat([cache[l].v, v], 1) as tf.Tensor3D;
    const t = kT.shape[2];
    const scores = tf.add(tf.reshape(tf.mul(tf.matMul(q, kT), 1 / Math.sqrt(d)), [batch, heads, 1, t]), keyMask);
    const probs = tf.reshape(tf.softmax(scores), [batch * heads, 1, t]) as tf.Tensor3D;
    const a = tf.reshape(tf.matMul(probs, vs), [batch, width]) as tf.Tensor2D;
    next.push({ kT, v: vs });
    x = tf.add(x, project(w, a, l, 'wo'));
    x = tf.add(x, mlp(w, x, l));
  }
  return { lastLogits: outputLogits(w, x), cache: next };
}
