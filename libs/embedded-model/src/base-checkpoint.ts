// The pretrained base model on disk (models/char-lm): float32 weights plus the transformer config and the
// record of how it was trained, in one rx-tensors file named `model`.
import * as path from 'node:path';
import { checkParams, type ParamSet } from './param-set';
import { readTensorFile, writeTensorFile } from './tensor-file';
import { baseParamSpecs, validateConfig, type TransformerConfig } from './transformer-config';

/** The base model name LoRA training clients of the embedded backend accept. */
export const EMBEDDED_BASE_MODEL = 'rx/char-lm';

/** Every name the embedded backend answers to: its own and the one specs/embedded.json pre-registers. */
export const EMBEDDED_BASE_MODEL_NAMES: readonly string[] = [EMBEDDED_BASE_MODEL, 'rx-embedded/char-lm'];

/** models/char-lm at the repository root (this file is libs/embedded-model/src/base-checkpoint.ts). */
export const DEFAULT_BASE_CHECKPOINT = path.resolve(__dirname, '..', '..', '..', 'models', 'char-lm');

const STEM = 'model';

export interface BaseCheckpoint {
  cfg: TransformerConfig;
  params: ParamSet;
  /** sha256 of the weight file: adapters and states record it to refuse a different base */
  sha256: string;
  training: Record<string, unknown>;
}

export function writeBaseCheckpoint(dir: string, cfg: TransformerConfig, params: ParamSet, training: Record<string, unknown>): string {
  checkParams(params, baseParamSpecs(cfg), 'base checkpoint');
  return writeTensorFile(dir, STEM, params, 'float32', { model: EMBEDDED_BASE_MODEL, config: cfg, training });
}

export function readBaseCheckpoint(dir: string): BaseCheckpoint {
  const { params, header } = readTensorFile(dir, STEM);
  const cfg = header.meta['config'] as TransformerConfig | undefined;
  if (!cfg || typeof cfg !== 'object') throw new Error(`${path.join(dir, STEM)}.json has no transformer config`);
  validateConfig(cfg);
  checkParams(params, baseParamSpecs(cfg), `base checkpoint ${dir}`);
  return { cfg, params, sha256: header.sha256, training: (header.meta['training'] as Record<string, unknown>) ?? {} };
}
