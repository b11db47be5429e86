// A LoRA training client on the Tinker service: forward_backward(importance_sampling) as a protobuf
// ForwardBackwardRequest (zstd when client/config asks), optim_step (AdamW), save_weights_for_sampler,
// save_weights / load_weights. Every call reserves the next `seq_id` of this model (1, 2, …; the server runs a
// model's requests in seq_id order) and keeps it across all its retries; a call the server refused still
// consumed its seq_id (as in the SDK, so the server must not wait for it).
import type { ZodType, ZodTypeDef } from 'zod';
import type { AdamParams, Datum, ForwardBackwardResult, LossFn, SaveOptions, TrainingClient } from '../policy-backend';
import type { TinkerCore } from './tinker-core';
import { datumToWire } from './tinker-datum';
import { TinkerError } from './tinker-errors';
import { isValidCheckpointName } from './tinker-path';
import {
  forwardBackwardOutputSchema,
  loadWeightsResponseSchema,
  optimStepResponseSchema,
  saveWeightsForSamplerResponseSchema,
  saveWeightsResponseSchema,
  unloadModelResponseSchema,
  type ForwardBackwardOutput,
  type TinkerRequestType,
  type UntypedApiFuture,
  type WireDatum,
} from './tinker-wire.schema';
import { PROTOBUF_CONTENT_TYPE, encodeForwardBackwardRequest } from './wire/tinker-proto';
import { ZSTD_ENCODING, zstdCompress } from './wire/zstd';

/** Splits a batch into chunks of at most `maxLen` datums and about `maxBytes` of JSON (the SDK's limits). */
export function chunkDatums(data: WireDatum[], maxLen: number, maxBytes: number): WireDatum[][] {
  const chunks: WireDatum[][] = [];
  let current: WireDatum[] = [];
  let bytes = 0;
  for (const d of data) {
    const size = JSON.stringify(d).length;
    if (current.length > 0 && (current.length >= maxLen || bytes + size > maxBytes)) {
      chunks.push(current);
      current = [];
      bytes = 0;
    }
    current.push(d);
    bytes += size;
  }
  if (current.length > 0) chunks.push(current);
  return chunks;
}

// loss = -sum_i sum_t exp(logp[i][t] - sampled[i][t]) * A[i][t]   (importance sampling, summed, no normalisation)
export function importanceSamplingLoss(datums: Datum[], logprobs: number[][]): number {
  let loss = 0;
  datums.forEach((d, i) => {
    for (let t = 0; t < d.advantages.length; t++) {
      const a = d.advantages[t]!;
      if (a !== 0) loss -= Math.exp(logprobs[i]![t]! - d.samplingLogprobs[t]!) * a;
    }
  });
  return loss;
}

export class TinkerTrainingClient implements TrainingClient {
  private nextSeq = 1;
  private optimSteps = 0;

  private readonly generation: number;

  constructor(
    private readonly core: TinkerCore,
    readonly modelId: string,
    /** the service refused the per-model seed: this model was created without it (why, one line) */
    readonly seedRefused: string | null = null,
  ) {
    this.generation = core.sessionGeneration;
  }

  async forwardBackward(datums: Datum[], lossFn: LossFn): Promise<ForwardBackwardResult> {
    if (lossFn !== 'importance_sampling') throw new TinkerError(`forwardBackward: loss '${String(lossFn)}' is not supported (importance_sampling only)`);
    if (datums.length === 0) throw new TinkerError('forwardBackward: the batch is empty');
    const wire = datums.map((d, i) => datumToWire(d, i));
    const session = await this.core.sessionOf(this.generation, 'forward_backward');
    const chunks = chunkDatums(wire, session.maxChunkLen, session.maxChunkBytes);
    const seqs = chunks.map(() => this.reserveSeq());
    // Like the SDK: chunks 2..n first, chunk 1 last, so the server can take the whole batch together.
    const order = chunks.map((_, i) => i).slice(1).concat(0);
    const futures: UntypedApiFuture[] = new Array(chunks.length);
    for (const i of order) {
      const plain = encodeForwardBackwardRequest({ model_id: this.modelId, seq_id: seqs[i]!, forward_backward_input: { data: chunks[i]!, loss_fn: 'importance_sampling' } }, false);
      const binary = session.compressForwardBackward
        ? { bytes: await zstdCompress(plain), contentType: PROTOBUF_CONTENT_TYPE, contentEncoding: ZSTD_ENCODING }
        : { bytes: plain, contentType: PROTOBUF_CONTENT_TYPE };
      futures[i] = await this.core.submit('forward_backward', undefined, { binary });
    }
    const outputs = await Promise.all(
      futures.map((f) => this.core.awaitFuture('forward_backward', f, 'ForwardBackward', forwardBackwardOutputSchema)),
    );
    const logprobs = outputs.flatMap((out, i) => this.chunkLogprobs(out, chunks[i]!));
    logprobs.forEach((lp, i) => {
      if (lp.length !== datums[i]!.targetTokens.length) {
        throw new TinkerError(`forward_backward: datum ${i} came back with ${lp.length} logprobs for ${datums[i]!.targetTokens.length} targets`);
      }
    });
    const sums = outputs.map((o) => o.metrics['loss:sum']);
    const loss = sums.every((s): s is number => typeof s === 'number')
      ? sums.reduce((a, b) => a + b, 0)
      : importanceSamplingLoss(datums, logprobs);
    return { loss, logprobs };
  }

  private chunkLogprobs(out: ForwardBackwardOutput, chunk: WireDatum[]): number[][] {
    if (out.loss_fn_outputs.length !== chunk.length) {
      throw new TinkerError(`forward_backward: ${out.loss_fn_outputs.length} outputs for ${chunk.length} datums`);
    }
    return out.loss_fn_outputs.map((o, i) => {
      const lp = o.logprobs;
      if (!lp) throw new TinkerError(`forward_backward: output ${i} has no logprobs (fields: ${Object.keys(o).join(', ') || 'none'})`);
      return lp.data;
    });
  }

  async optimStep(params: AdamParams): Promise<{ step: number }> {
    const adam = {
      learning_rate: params.learningRate,
      beta1: params.beta1,
      beta2: params.beta2,
      eps: params.eps,
      weight_decay: params.weightDecay ?? 0,
      grad_clip_norm: 0,
    };
    for (const [k, v] of Object.entries(adam)) {
      if (!Number.isFinite(v)) throw new TinkerError(`optimStep: ${k} must be a finite number (got ${v})`);
    }
    const res = await this.trainingCall('optim_step', { adam_params: adam, type: 'optim_step' }, 'OptimStep', optimStepResponseSchema);
    this.optimSteps++;
    const serverStep = res.metrics?.['step:max'];
    return { step: typeof serverStep === 'number' ? serverStep : this.optimSteps };
  }

  async saveWeightsForSampler(name: string, options: SaveOptions = {}): Promise<string> {
    this.checkName('saveWeightsForSampler', name);
    const fields = { path: name, ...ttl('saveWeightsForSampler', options), type: 'save_weights_for_sampler' };
    const res = await this.trainingCall('save_weights_for_sampler', fields, 'SaveWeightsForSampler', saveWeightsForSamplerResponseSchema);
    if (!res.path) throw new TinkerError('save_weights_for_sampler: the server answered without a path');
    return res.path;
  }

  async saveState(name: string, options: SaveOptions = {}): Promise<string> {
    this.checkName('saveState', name);
    const fields = { path: name, ...ttl('saveState', options), overwrite: false, type: 'save_weights' };
    const res = await this.trainingCall('save_weights', fields, 'SaveWeights', saveWeightsResponseSchema);
    return res.path;
  }

  async loadState(path: string): Promise<void> {
    if (!path.startsWith('tinker://')) throw new TinkerError(`loadState: expected a tinker:// path from saveState (got '${path}')`);
    await this.trainingCall('load_weights', { path, optimizer: true, type: 'load_weights' }, 'LoadWeights', loadWeightsResponseSchema);
  }

  /** unload_model: the service frees the model (its saved checkpoints stay); the client cannot be used afterwards. */
  async unload(): Promise<void> {
    await this.core.sessionOf(this.generation, 'unload_model');
    await this.core.submitAndAwait('unload_model', { model_id: this.modelId, type: 'unload_model' }, 'UnloadModel', unloadModelResponseSchema);
  }

  private checkName(what: string, name: string): void {
    if (!isValidCheckpointName(name)) throw new TinkerError(`${what}: '${name}' is not a checkpoint name (letters, digits, '.', '_', '-')`);
  }

  private async trainingCall<T>(name: string, fields: Record<string, unknown>, type: TinkerRequestType, schema: ZodType<T, ZodTypeDef, unknown>): Promise<T> {
    await this.core.sessionOf(this.generation, name);
    const seq = this.reserveSeq();
    const future = await this.core.submit(name, { model_id: this.modelId, seq_id: seq, ...fields });
    return this.core.awaitFuture(name, future, type, schema);
  }

  /** The next seq_id; never given back, even when the server refuses the call (the server counts it as used). */
  private reserveSeq(): number {
    return this.nextSeq++;
  }
}

/** `ttl_seconds` for a save, checked: a positive whole number of seconds. */
function ttl(what: string, options: SaveOptions): { ttl_seconds?: number } {
  if (options.ttlSeconds === undefined) return {};
  if (!Number.isInteger(options.ttlSeconds) || options.ttlSeconds < 1) throw new TinkerError(`${what}: ttlSeconds must be a positive whole number (got ${options.ttlSeconds})`);
  return { ttl_seconds: options.ttlSeconds };
}
