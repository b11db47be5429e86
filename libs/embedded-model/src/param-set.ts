// Named parameter arrays in float64 (the optimiser's master copy), their seeded initialisation, and the
// conversion to float32 tensors for the model.
import { Prng } from './prng';
import { tf } from './tf-runtime';
import { baseParamSpecs, loraParamSpecs, sizeOf, type ParamSpec, type TransformerConfig } from './transformer-config';

export interface NamedArray {
  name: string;
  shape: number[];
  data: Float64Array;
}

/** Parameters in a fixed order. */
export type ParamSet = NamedArray[];

export type TensorMap = Record<string, tf.Tensor>;

/** Base weights for pretraining: N(0, 0.02^2) matrices, residual outputs (wo, fc2) scaled by 1/sqrt(2 layers), LayerNorm gains 1, biases 0. */
export function initBaseParams(cfg: TransformerConfig, seed: number): ParamSet {
  return baseParamSpecs(cfg).map((spec, i) => {
    const data = new Float64Array(sizeOf(spec.shape));
    if (spec.name.endsWith('.g')) data.fill(1);
    else if (spec.shape.length === 2) {
      const std = /\.(wo|fc2)$/.test(spec.name) ? 0.02 / Math.sqrt(2 * cfg.layers) : 0.02;
      const rng = new Prng(seed, i);
      for (let j = 0; j < data.length; j++) data[j] = std * rng.normal();
    }
    return { name: spec.name, shape: [...spec.shape], data };
  });
}

/** LoRA adapters: A ~ U(-1/sqrt(in), 1/sqrt(in)) from the seed, B = 0, so the adapted model starts equal to the base. */
export function initLoraParams(cfg: TransformerConfig, rank: number, seed: number): ParamSet {
  return loraParamSpecs(cfg, rank).map((spec, i) => {
    const data = new Float64Array(sizeOf(spec.shape));
    if (spec.name.endsWith('.lora_a')) {
      const bound = 1 / Math.sqrt(spec.shape[0]);
      const rng = new Prng(seed, i);
      for (let j = 0; j < data.length; j++) data[j] = bound * (2 * rng.uniform() - 1);
    }
    return { name: spec.name, shape: [...spec.shape], data };
  });
}

export function zerosLike(params: ParamSet): ParamSet {
  return params.map((p) => ({ name: p.name, shape: [...p.shape], data: new Float64Array(p.data.length) }));
}

export function paramCount(params: ParamSet): number {
  return params.reduce((n, p) => n + p.data.length, 0);
}

/** Checks names and shapes against the expected specs, in order. */
export function checkParams(params: ParamSet, specs: ParamSpec[], what: string): void {
  if (params.length !== specs.length) throw new Error(`${what}: ${params.length} tensors, expected ${specs.length}`);
  specs.forEach((s, i) => {
    const p = params[i];
    if (p.name !== s.name || p.shape.join('x') !== s.shape.join('x') || p.data.length !== sizeOf(s.shape)) {
      throw new Error(`${what}: tensor ${i} is ${p.name} [${p.shape}], expected ${s.name} [${s.shape}]`);
    }
  });
}

/** float32 tensors of the parameters, keyed by name (the caller disposes them) */
export function toTensors(params: ParamSet): TensorMap {
  const out: TensorMap = {};
  for (const p of params) out[p.name] = tf.tensor(Float32Array.from(p.data), p.shape, 'float32');
  return out;
}

export function disposeTensors(map: TensorMap): void {
  for (const t of Object.values(map)) t.dispose();
}
