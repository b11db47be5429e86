// Shape of the decoder-only transformer and of its LoRA adapters, and the parameter names both use.
import { CHAR_VOCAB_SIZE } from '@rx/backend';

export interface TransformerConfig {
  vocabSize: number;
  width: number;
  layers: number;
  heads: number;
  /** maximum sequence length (learned absolute positions) */
  context: number;
  /** hidden width of the MLP */
  mlpWidth: number;
}

export interface LoraShape {
  rank: number;
  /** adapters add (alpha / rank) * x A B */
  alpha: number;
}

/** The committed base model: width 64, 2 layers, 4 heads, context 128 (about 112k parameters). */
export const CHAR_LM_CONFIG: TransformerConfig = { vocabSize: CHAR_VOCAB_SIZE, width: 64, layers: 2, heads: 4, context: 128, mlpWidth: 256 };

/** LoRA alpha: with alpha 32 at the spec's rank 32 the adapter scale alpha/rank is 1. */
export const DEFAULT_LORA_ALPHA = 32;

/** The projections that carry LoRA adapters, per layer. */
export const LORA_TARGETS = ['wq', 'wk', 'wv', 'wo', 'fc1', 'fc2'] as const;
export type LoraTarget = (typeof LORA_TARGETS)[number];

export interface ParamSpec {
  name: string;
  shape: number[];
}

/** Base parameters in a fixed order (the checkpoint's manifest order). */
export function baseParamSpecs(c: TransformerConfig): ParamSpec[] {
  const specs: ParamSpec[] = [
    { name: 'tok_emb', shape: [c.vocabSize, c.width] },
    { name: 'pos_emb', shape: [c.context, c.width] },
  ];
  for (let l = 0; l < c.layers; l++) {
    specs.push(
      { name: `l${l}.ln1.g`, shape: [c.width] },
      { name: `l${l}.ln1.b`, shape: [c.width] },
      { name: `l${l}.wq`, shape: [c.width, c.width] },
      { name: `l${l}.wk`, shape: [c.width, c.width] },
      { name: `l${l}.wv`, shape: [c.width, c.width] },
      { name: `l${l}.wo`, shape: [c.width, c.width] },
      { name: `l${l}.ln2.g`, shape: [c.width] },
      { name: `l${l}.ln2.b`, shape: [c.width] },
      { name: `l${l}.fc1`, shape: [c.width, c.mlpWidth] },
      { name: `l${l}.fc1.bias`, shape: [c.mlpWidth] },
      { name: `l${l}.fc2`, shape: [c.mlpWidth, c.width] },
    );
  }
  specs.push({ name: 'lnf.g', shape: [c.width] }, { name: 'lnf.b', shape: [c.width] }, { name: 'head', shape: [c.width, c.vocabSize] });
  return specs;
}

/** [in, out] of one adapted projection */
export function projectionShape(c: TransformerConfig, target: LoraTarget): [number, number] {
  if (target === 'fc1') return [c.width, c.mlpWidth];
  if (target === 'fc2') return [c.mlpWidth, c.width];
  return [c.width, c.width];
}

/** LoRA parameters in a fixed order: for each layer and target, `<l>.<target>.lora_a` [in, r] then `.lora_b` [r, out]. */
export function loraParamSpecs(c: TransformerConfig, rank: number): ParamSpec[] {
  const specs: ParamSpec[] = [];
  for (let l = 0; l < c.layers; l++) {
    for (const t of LORA_TARGETS) {
      const [fanIn, fanOut] = projectionShape(c, t);
      specs.push({ name: `l${l}.${t}.lora_a`, shape: [fanIn, rank] }, { name: `l${l}.${t}.lora_b`, shape: [rank, fanOut] });
    }
  }
  return specs;
}

export function sizeOf(shape: readonly number[]): number {
  return shape.reduce((a, b) => a * b, 1);
}

export function validateConfig(c: TransformerConfig): void {
  for (const [k, v] of Object.entries(c)) {
    if (!Number.isInteger(v) || v <= 0) throw new Error(`transformer config: ${k} must be a positive integer, got ${v}`);
  }
  if (c.width % c.heads !== 0) throw new Error(`transformer config: width ${c.width} is not divisible by heads ${c.heads}`);
}
