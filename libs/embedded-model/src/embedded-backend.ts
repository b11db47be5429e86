// The embedded CPU policy backend: the pretrained character transformer (frozen) with LoRA adapters, behind
// the PolicyBackend interface, in-process. Sampler weights live under <dataDir>/weights/<name>
// (`embedded://<name>`), training states under <dataDir>/states/<name> (`embedded://states/<name>`).
import type {
  AdamParams,
  AdapterWeights,
  Datum,
  ForwardBackwardResult,
  LoraConfig,
  LossFn,
  ModelLimits,
  PolicyBackend,
  SampledSequence,
  SampleParams,
  SamplingClient,
  TrainingClient,
} from '@rx/backend';
import * as path from 'node:path';
import { adamwStep, initAdamW, type AdamWState } from './adamw';
import { DEFAULT_BASE_CHECKPOINT, EMBEDDED_BASE_MODEL, EMBEDDED_BASE_MODEL_NAMES, readBaseCheckpoint, type BaseCheckpoint } from './base-checkpoint';
import { importanceSamplingPositionLoss, lossAndGrads, padDatums, sequenceLogprobs, type PositionLoss } from './loss-gradients';
import { checkParams, disposeTensors, initLoraParams, toTensors, zerosLike, type ParamSet, type TensorMap } from './param-set';
import { sampleBatch } from './sampler';
import { readTensorFile, writeTensorFile } from './tensor-file';
import { ensureTfWasm } from './tf-runtime';
import type { ModelWeights } from './transformer';
import { DEFAULT_LORA_ALPHA, LORA_TARGETS, loraParamSpecs, projectionShape, type TransformerConfig } from './transformer-config';

export const EMBEDDED_SCHEME = 'embedded://';
/** sampling path of the base model without adapters */
export const EMBEDDED_BASE_PATH = `${EMBEDDED_SCHEME}base`;
const STATES_PREFIX = 'states/';
/** datums per forward/backward pass; longer lists are processed in chunks and their gradients summed */
const TRAIN_CHUNK = 64;
/** sampling clients whose merged weights stay resident; older ones are freed and reloaded on use */
const RESIDENT_SAMPLERS = 4;
const MAX_RANK = 256;

export interface EmbeddedBackendOptions {
  /** where sampler weights (weights/) and training states (states/) are written */
  dataDir: string;
  /** directory of the base checkpoint; default models/char-lm at the repository root */
  baseCheckpoint?: string;
}

/** A request the embedded model cannot serve (unknown base model): the caller's mistake. */
export class EmbeddedBackendUserError extends Error {
  override readonly name = 'EmbeddedBackendUserError';
  readonly category = 'user' as const;
}

export interface LoadedBase {
  ckpt: BaseCheckpoint;
  tensors: TensorMap;
}

/** Names are `/`-separated segments of letters, digits, `.`, `_`, `-` (e.g. `<run>/<arm>/step-0003`). */
export function checkModelName(name: string): void {
  const segments = name.split('/');
  const ok = name.length > 0 && name.length <= 200 && segments.every((s) => /^[A-Za-z0-9._-]+$/.test(s) && s !== '.' && s !== '..');
  if (!ok) throw new Error(`invalid model name '${name}': use '/'-separated segments of letters, digits, '.', '_' and '-'`);
}

function checkBaseModel(baseModel: string): void {
  if (!EMBEDDED_BASE_MODEL_NAMES.includes(baseModel)) {
    throw new EmbeddedBackendUserError(`the embedded backend serves base model '${EMBEDDED_BASE_MODEL}', not '${baseModel}'`);
  }
}

function parseEmbeddedPath(p: string, what: string): string {
  if (!p.startsWith(EMBEDDED_SCHEME)) throw new Error(`${what} '${p}' is not an ${EMBEDDED_SCHEME} path`);
  const name = p.slice(EMBEDDED_SCHEME.length);
  checkModelName(name);
  return name;
}

export class EmbeddedBackend implements PolicyBackend {
  readonly kind = 'embedded' as const;
  readonly dataDir: string;
  readonly baseCheckpoint: string;
  private base: Promise<LoadedBase> | null = null;
  private closed = false;
  private trainingClients = 0;
  /** resident merged weights by path, oldest first */
  private resident = new Map<string, ModelWeights>();

  constructor(opts: EmbeddedBackendOptions) {
    if (!opts.dataDir) throw new Error('EmbeddedBackend needs a dataDir');
    this.dataDir = path.resolve(opts.dataDir);
    this.baseCheckpoint = path.resolve(opts.baseCheckpoint ?? DEFAULT_BASE_CHECKPOINT);
  }

  /** the base checkpoint, loaded once */
  loadBase(): Promise<LoadedBase> {
    this.ensureOpen();
    if (!this.base) {
      this.base = (async () => {
        await ensureTfWasm();
        const ckpt = readBaseCheckpoint(this.baseCheckpoint);
        return { ckpt, tensors: toTensors(ckpt.params) };
      })();
      this.base.catch(() => (this.base = null));
    }
    return this.base;
  }

  async modelLimits(baseModel: string): Promise<ModelLimits> {
    checkBaseModel(baseModel);
    const { cfg } = (await this.loadBase()).ckpt;
    return { vocabSize: cfg.vocabSize, contextLength: cfg.context, maxLoraRank: MAX_RANK };
  }

  async createLoraTrainingClient(config: LoraConfig): Promise<EmbeddedTrainingClient> {
    checkBaseModel(config.baseModel);
    if (!Number.isInteger(config.rank) || config.rank < 1 || config.rank > MAX_RANK) throw new Error(`LoRA rank must be an integer in 1..${MAX_RANK}, got ${config.rank}`);
    if (!Number.isSafeInteger(config.seed)) throw new Error(`LoRA seed must be a safe integer, got ${config.seed}`);
    const base = await this.loadBase();
    this.trainingClients += 1;
    return new EmbeddedTrainingClient(this, base, config, `embedded-lora-${this.trainingClients}`);
  }

  async createSamplingClient(modelPath: string): Promise<EmbeddedSamplingClient> {
    const base = await this.loadBase();
    if (modelPath !== EMBEDDED_BASE_PATH) {
      const name = parseEmbeddedPath(modelPath, 'sampler path');
      readAdapter(this, base, name); // fail now, not at the first sample
    }
    return new EmbeddedSamplingClient(this, modelPath);
  }

  supportedModels(): string[] {
    return [...EMBEDDED_BASE_MODEL_NAMES];
  }

  /**
   * The LoRA adapter of a saved checkpoint, as its file holds it: a training state's param/ tensors (float64, with the
   * optimizer's step), or sampler weights (float32).
   */
  async adapterWeights(modelPath: string): Promise<AdapterWeights> {
    this.ensureOpen();
    const full = parseEmbeddedPath(modelPath, 'checkpoint path');
    const state = full.startsWith(STATES_PREFIX);
    const name = state ? full.slice(STATES_PREFIX.length) : full;
    const { params, header } = state ? readTensorFile(this.statesDir(name), 'state') : readTensorFile(this.weightsDir(name), 'adapter');
    const lora = state ? params.filter((p) => p.name.startsWith('param/')).map((p) => ({ ...p, name: p.name.slice('param/'.length) })) : params;
    const dtype = header.dtype === 'float64' ? ('F64' as const) : ('F32' as const);
    const step = header.meta['step'];
    const alpha = header.meta['alpha'];
    return {
      tensors: lora.map((p) => ({ name: p.name, dtype, shape: [...p.shape], data: dtype === 'F64' ? Float64Array.from(p.data) : Float32Array.from(p.data) })),
      baseModel: EMBEDDED_BASE_MODEL,
      rank: header.meta['rank'] as number,
      alpha: typeof alpha === 'number' ? alpha : null,
      optimizerStep: state && typeof step === 'number' ? step : null,
    };
  }

  async ping(): Promise<boolean> {
    return !this.closed;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    for (const w of this.resident.values()) disposeTensors(w.base);
    this.resident.clear();
    if (this.base) {
      const b = await this.base.catch(() => null);
      if (b) disposeTensors(b.tensors);
    }
    this.base = null;
  }

  weightsDir(name: string): string {
    return path.join(this.dataDir, 'weights', ...name.split('/'));
  }

  statesDir(name: string): string {
    return path.join(this.dataDir, 'states', ...name.split('/'));
  }

  /** merged (base + adapter) weights of a sampler path, kept resident for the last few paths */
  async samplerWeights(modelPath: string): Promise<ModelWeights> {
    this.ensureOpen();
    const hit = this.resident.get(modelPath);
    if (hit) {
      this.resident.delete(modelPath);
      this.resident.set(modelPath, hit);
      return hit;
    }
    const base = await this.loadBase();
    let merged: ParamSet = base.ckpt.params;
    if (modelPath !== EMBEDDED_BASE_PATH) {
      const adapter = readAdapter(this, base, parseEmbeddedPath(modelPath, 'sampler path'));
      merged = mergeLora(base.ckpt.cfg, base.ckpt.params, adapter.lora, adapter.alpha / adapter.rank);
    }
    const w: ModelWeights = { cfg: base.ckpt.cfg, base: toTensors(merged), loraScale: 0, trainBase: false };
    this.resident.set(modelPath, w);
    while (this.resident.size > RESIDENT_SAMPLERS) {
      const [oldest, ow] = this.resident.entries().next().value as [string, ModelWeights];
      disposeTensors(ow.base);
      this.resident.delete(oldest);
    }
    return w;
  }

  ensureOpen(): void {
    if (this.closed) throw new Error('the embedded backend is closed');
  }
}

interface Adapter {
  lora: ParamSet;
  rank: number;
  alpha: number;
}

function readAdapter(backend: EmbeddedBackend, base: LoadedBase, name: string): Adapter {
  const dir = backend.weightsDir(name);
  const { params, header } = readTensorFile(dir, 'adapter');
  const rank = header.meta['rank'] as number;
  const alpha = header.meta['alpha'] as number;
  if (header.meta['baseSha256'] !== base.ckpt.sha256) throw new Error(`sampler weights ${name} were trained on a different base checkpoint than ${backend.baseCheckpoint}`);
  checkParams(params, loraParamSpecs(base.ckpt.cfg, rank), `sampler weights ${name}`);
  return { lora: params, rank, alpha };
}

/** W' = W + scale * A B for every adapted projection, in float64 */
function mergeLora(cfg: TransformerConfig, base: ParamSet, lora: ParamSet, scale: number): ParamSet {
  const byName = new Map(lora.map((p) => [p.name, p]));
  return base.map((p) => {
    const m = /^l(\d+)\.(\w+)$/.exec(p.name);
    const target = m?.[2] as (typeof LORA_TARGETS)[number] | undefined;
    if (!m || !target || !LORA_TARGETS.includes(target)) return p;
    const a = byName.get(`${p.name}.lora_a`)!;
    const b = byName.get(`${p.name}.lora_b`)!;
    const [fanIn, fanOut] = projectionShape(cfg, target);
    const r = a.shape[1];
    const data = new Float64Array(p.data);
    for (let i = 0; i < fanIn; i++) {
      for (let k = 0; k < r; k++) {
        const aik = scale * a.data[i * r + k];
        if (aik === 0) continue;
        for (let j = 0; j < fanOut; j++) data[i * fanOut + j] += aik * b.data[k * fanOut + j];
      }
    }
    return { name: p.name, shape: p.shape, data };
  });
}

export class EmbeddedTrainingClient implements TrainingClient {
  readonly modelId: string;
  readonly rank: number;
  readonly alpha = DEFAULT_LORA_ALPHA;
  private lora: ParamSet;
  private grads: ParamSet;
  private adam: AdamWState;
  /** the trainer's loss of loss_fn 'importance_sampling', computed in the forward pass (float32) */
  protected readonly trainingLoss: PositionLoss = importanceSamplingPositionLoss;

  constructor(
    private readonly backend: EmbeddedBackend,
    private readonly base: LoadedBase,
    config: LoraConfig,
    modelId: string,
  ) {
    this.modelId = modelId;
    this.rank = config.rank;
    this.lora = initLoraParams(base.ckpt.cfg, config.rank, config.seed);
    this.grads = zerosLike(this.lora);
    this.adam = initAdamW(this.lora);
  }

  /** optimiser steps taken */
  get step(): number {
    return this.adam.step;
  }

  /** a copy of the current adapter parameters (float64) */
  loraParams(): ParamSet {
    return this.lora.map((p) => ({ name: p.name, shape: [...p.shape], data: new Float64Array(p.data) }));
  }

  /** the accumulated gradient since the last optimStep (float64 copies) */
  accumulatedGrads(): ParamSet {
    return this.grads.map((p) => ({ name: p.name, shape: [...p.shape], data: new Float64Array(p.data) }));
  }

  /** Replaces the adapter parameters (for tests and finite differences); optimiser state is kept. */
  setLoraParams(params: ParamSet): void {
    checkParams(params, loraParamSpecs(this.base.ckpt.cfg, this.rank), 'LoRA parameters');
    this.lora = params.map((p) => ({ name: p.name, shape: [...p.shape], data: new Float64Array(p.data) }));
  }

  private weights(lora: TensorMap): ModelWeights {
    return { cfg: this.base.ckpt.cfg, base: this.base.tensors, lora, loraScale: this.alpha / this.rank, trainBase: false };
  }

  /**
   * Sums the gradient of L = -sum exp(logp - logp_sampled) * A into the accumulator (until optimStep). Returns the
   * loss of that same forward pass (float32, summed over chunks) and each datum's per-target logprobs, as Tinker
   * returns `loss:sum` and `loss_fn_outputs[i].logprobs`.
   */
  async forwardBackward(datums: Datum[], lossFn: LossFn): Promise<ForwardBackwardResult> {
    return this.pass(datums, lossFn, true);
  }

  /** The loss and logprobs of forwardBackward, with no gradient accumulated (Tinker's forward). */
  async forward(datums: Datum[], lossFn: LossFn): Promise<ForwardBackwardResult> {
    return this.pass(datums, lossFn, false);
  }

  private async pass(datums: Datum[], lossFn: LossFn, accumulate: boolean): Promise<ForwardBackwardResult> {
    this.backend.ensureOpen();
    if (lossFn !== 'importance_sampling') throw new Error(`the embedded backend supports loss_fn 'importance_sampling' only, not '${String(lossFn)}'`);
    const lora = toTensors(this.lora);
    try {
      const w = this.weights(lora);
      const logprobs: number[][] = [];
      const chunks: ParamSet[] = [];
      let loss = 0;
      for (let c = 0; c < datums.length || c === 0; c += TRAIN_CHUNK) {
        const part = datums.slice(c, c + TRAIN_CHUNK);
        const r = lossAndGrads(w, lora, padDatums(w, part), this.trainingLoss);
        logprobs.push(...r.logprobs);
        loss += r.loss;
        chunks.push(this.lora.map((p) => ({ name: p.name, shape: p.shape, data: Float64Array.from(r.grads[p.name]) })));
      }
      if (accumulate) for (const g of chunks) g.forEach((p, i) => addInto(this.grads[i].data, p.data));
      return { loss, logprobs };
    } finally {
      disposeTensors(lora);
    }
  }

  async optimStep(params: AdamParams): Promise<{ step: number }> {
    this.backend.ensureOpen();
    adamwStep(this.lora, this.grads, this.adam, {
      learningRate: params.learningRate,
      beta1: params.beta1,
      beta2: params.beta2,
      eps: params.eps,
      weightDecay: params.weightDecay ?? 0,
    });
    for (const g of this.grads) g.data.fill(0);
    return { step: this.adam.step };
  }

  async saveWeightsForSampler(name: string): Promise<string> {
    this.backend.ensureOpen();
    checkModelName(name);
    if (`${EMBEDDED_SCHEME}${name}` === EMBEDDED_BASE_PATH) throw new Error(`'${name}' is reserved for the base model`);
    writeTensorFile(this.backend.weightsDir(name), 'adapter', this.lora, 'float32', this.meta());
    return `${EMBEDDED_SCHEME}${name}`;
  }

  async saveState(name: string): Promise<string> {
    this.backend.ensureOpen();
    checkModelName(name);
    const tensors: ParamSet = [
      ...this.lora.map((p) => ({ ...p, name: `param/${p.name}` })),
      ...this.adam.m.map((p) => ({ ...p, name: `adam_m/${p.name}` })),
      ...this.adam.v.map((p) => ({ ...p, name: `adam_v/${p.name}` })),
    ];
    writeTensorFile(this.backend.statesDir(name), 'state', tensors, 'float64', { ...this.meta(), step: this.adam.step });
    return `${EMBEDDED_SCHEME}${STATES_PREFIX}${name}`;
  }

  async loadState(statePath: string): Promise<void> {
    const { params, adamM, adamV, step } = this.readState(statePath);
    this.lora = params;
    this.adam = { m: adamM, v: adamV, step };
    this.grads = zerosLike(this.lora);
  }

  /** The weights of a saveState checkpoint, with the optimizer started afresh (Tinker's load_state). */
  async loadWeights(statePath: string): Promise<void> {
    this.lora = this.readState(statePath).params;
    this.adam = initAdamW(this.lora);
    this.grads = zerosLike(this.lora);
  }

  private readState(statePath: string): { params: ParamSet; adamM: ParamSet; adamV: ParamSet; step: number } {
    this.backend.ensureOpen();
    const full = parseEmbeddedPath(statePath, 'state path');
    if (!full.startsWith(STATES_PREFIX)) throw new Error(`state path '${statePath}' does not name a saved state (${EMBEDDED_SCHEME}${STATES_PREFIX}<name>)`);
    const name = full.slice(STATES_PREFIX.length);
    const { params, header } = readTensorFile(this.backend.statesDir(name), 'state');
    if (header.meta['baseSha256'] !== this.base.ckpt.sha256) throw new Error(`state ${name} was trained on a different base checkpoint`);
    if (header.meta['rank'] !== this.rank) throw new Error(`state ${name} has LoRA rank ${String(header.meta['rank'])}, this client has rank ${this.rank}`);
    const specs = loraParamSpecs(this.base.ckpt.cfg, this.rank);
    const part = (prefix: string) => {
      const ps = params.filter((p) => p.name.startsWith(prefix)).map((p) => ({ ...p, name: p.name.slice(prefix.length) }));
      checkParams(ps, specs, `state ${name} (${prefix})`);
      return ps;
    };
    const step = header.meta['step'];
    if (!Number.isInteger(step) || (step as number) < 0) throw new Error(`state ${name} has no valid step`);
    return { params: part('param/'), adamM: part('adam_m/'), adamV: part('adam_v/'), step: step as number };
  }

  private meta(): Record<string, unknown> {
    return { baseModel: EMBEDDED_BASE_MODEL, baseSha256: this.base.ckpt.sha256, rank: this.rank, alpha: this.alpha, step: this.adam.step };
  }
}

function addInto(acc: Float64Array, x: Float64Array): void {
  for (let i = 0; i < acc.length; i++) acc[i] += x[i];
}

export class EmbeddedSamplingClient implements SamplingClient {
  constructor(
    private readonly backend: EmbeddedBackend,
    readonly modelPath: string,
  ) {}

  /** numSamples completions of one prompt; with a seed, row i draws from stream i of that seed */
  async sample(promptTokens: number[], numSamples: number, params: SampleParams): Promise<SampledSequence[]> {
    if (!Number.isInteger(numSamples) || numSamples < 1) throw new Error(`numSamples must be a positive integer, got ${numSamples}`);
    return this.sampleBatch(Array.from({ length: numSamples }, () => promptTokens), params);
  }

  /** One completion per prompt (beyond the interface): prompts of any lengths, decoded 64 at a time with the KV cache. */
  async sampleBatch(prompts: number[][], params: SampleParams): Promise<SampledSequence[]> {
    const w = await this.backend.samplerWeights(this.modelPath);
    return sampleBatch(w, prompts, params);
  }

  async computeLogprobs(tokens: number[]): Promise<(number | null)[]> {
    const w = await this.backend.samplerWeights(this.modelPath);
    return sequenceLogprobs(w, tokens);
  }
}
