// The decoder-only transformer: token one-hot embedding (tf.gather's gradient needs a kernel wasm lacks),
// learned absolute positions, pre-LayerNorm blocks (causal multi-head attention, GELU MLP), final LayerNorm and
// an output head. Projections optionally carry LoRA adapters: y = x W + (alpha / r) (x A) B.
import { tf } from './tf-runtime';
import type { KvCache } from './kv-cache';
import { attention, attentionLeftPadded, causalMask, gelu, layerNorm, matmul, matmulFrozen, type AttentionShape } from './tensor-ops';
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
export function forwardLogits(w: ModelWeights, tokens: tf.Tensor2D): tf.Tensor2D {
  const [batch, time] = tokens.shape;
  if (time > w.cfg.context) throw new Error(`sequence of ${time} tokens exceeds the model context of ${w.cfg.context}`);
  const shape: AttentionShape = { batch, time, heads: w.cfg.heads };
  const causal = causalMask(time);
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

/**
 * Inference over left-padded prompts [B, T] (row b starts with pads[b] padding tokens): positions count from
 * each row's first real token and padding is never attended to. Fills the KV cache for positions 0..T-1 and
 * returns the logits [B, V] of the token after the last position.
 */
export function prefill(w: ModelWeights, tokens: tf.Tensor2D, positions: tf.Tensor2D, pads: readonly number[], cache: KvCache): tf.Tensor2D {
  const [batch, time] = tokens.shape;
  const shape: AttentionShape = { batch, time, heads: w.cfg.heads };
  const width = w.cfg.width;
  return tf.tidy(() => {
    let x = embed(w, tokens, positions);
    for (let l = 0; l < w.cfg.layers; l++) {
      const h = layerNorm(x, w.base[`l${l}.ln1.g`], w.base[`l${l}.ln1.b`]);
      const [qa, ka, va] = (['wq', 'wk', 'wv'] as const).map((t) => project(w, h, l, t).dataSync() as Float32Array);
      cache.write(l, 0, time, ka, va);
      const a = tf.tensor2d(attentionLeftPadded(qa, ka, va, shape, width, pads), [batch * time, width]);
      x = tf.add(x, project(w, a, l, 'wo'));
      x = tf.add(x, mlp(w, x, l));
    }
    cache.length = time;
    const last = tf.reshape(tf.slice(tf.reshape(x, [batch, time, width]), [0, time - 1, 0], [batch, 1, width]), [batch, width]);
    return outputLogits(w, last as tf.Tensor2D);
  });
}

/** One decoding step: tokens [B] at positions [B] go into the cache at its next slot; returns the next logits [B, V]. */
export function decodeStep(w: ModelWeights, tokens: tf.Tensor1D, positions: tf.Tensor1D, cache: KvCache): tf.Tensor2D {
  const batch = tokens.shape[0];
  const width = w.cfg.width;
  const slot = cache.length;
  return tf.tidy(() => {
    let x = embed(w, tf.reshape(tokens, [batch, 1]), tf.reshape(positions, [batch, 1]));
    for (let l = 0; l < w.cfg.layers; l++) {
      const h = layerNorm(x, w.base[`l${l}.ln1.g`], w.base[`l${l}.ln1.b`]);
      const [qa, ka, va] = (['wq', 'wk', 'wv'] as const).map((t) => project(w, h, l, t).dataSync() as Float32Array);
      cache.write(l, slot, 1, ka, va);
      const a = tf.tensor2d(cache.attend(l, qa, slot + 1), [batch, width]);
      x = tf.add(x, project(w, a, l, 'wo'));
      x = tf.add(x, mlp(w, x, l));
    }
    cache.length = slot + 1;
    return outputLogits(w, x);
  });
}
