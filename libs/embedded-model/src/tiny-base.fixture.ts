// Test fixture: a tiny random base checkpoint (width 16, 2 layers, 2 heads, context 40) written to a temp dir,
// with weights large enough that activations and gradients are far from trivial.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { CHAR_VOCAB_SIZE } from '@rx/backend';
import { writeBaseCheckpoint } from './base-checkpoint';
import { initBaseParams, type ParamSet } from './param-set';
import { Prng } from './prng';
import type { TransformerConfig } from './transformer-config';

export const TINY_CONFIG: TransformerConfig = { vocabSize: CHAR_VOCAB_SIZE, width: 16, layers: 2, heads: 2, context: 40, mlpWidth: 32 };

export interface TinyBase {
  root: string;
  baseDir: string;
  dataDir: string;
  cleanup(): void;
}

export function writeTinyBase(seed = 11): TinyBase {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'rx-embedded-'));
  const baseDir = path.join(root, 'base');
  const params = initBaseParams(TINY_CONFIG, seed);
  const rng = new Prng(seed, 999);
  for (const p of params) {
    if (p.shape.length === 2) for (let i = 0; i < p.data.length; i++) p.data[i] *= 6;
    else for (let i = 0; i < p.data.length; i++) p.data[i] += 0.2 * rng.normal();
  }
  writeBaseCheckpoint(baseDir, TINY_CONFIG, params, { fixture: true, seed });
  return { root, baseDir, dataDir: path.join(root, 'data'), cleanup: () => fs.rmSync(root, { recursive: true, force: true }) };
}

/** random LoRA parameters (both A and B non-zero) of the same names and shapes */
export function randomLike(params: ParamSet, seed: number, scale: number): ParamSet {
  return params.map((p, i) => {
    const rng = new Prng(seed, i);
    return { name: p.name, shape: [...p.shape], data: Float64Array.from(p.data, () => scale * rng.normal()) };
  });
}
