// The Tinker protocol subset, served over any PolicyBackend: sessions, LoRA training clients (run in seq_id
// order), futures with long-poll, tinker:// paths for saved weights and states, sampling sessions.
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { HttpException, Inject, Injectable, NotFoundException, type OnModuleDestroy } from '@nestjs/common';
import {
  DatumShapeError,
  DenseSizeError,
  ProtoWireError,
  decodeForwardBackwardRequest,
  encodeForwardBackwardOutput,
  encodeSampleResponse,
  forwardRequestSchema,
  weightsInfoRequestSchema,
  type ForwardBackwardOutput,
  type ForwardBackwardRequest,
  type SampleResponse,
  createModelRequestSchema,
  createSamplingSessionRequestSchema,
  createSessionRequestSchema,
  forwardBackwardRequestSchema,
  formatTinkerPath,
  isValidCheckpointName,
  loadWeightsRequestSchema,
  modelInputToTokens,
  optimStepRequestSchema,
  parseTinkerPath,
  retrieveFutureRequestSchema,
  sampleRequestSchema,
  saveWeightsForSamplerRequestSchema,
  saveWeightsRequestSchema,
  sessionHeartbeatRequestSchema,
  wireToDatum,
  writeCheckpointArchive,
  type Datum,
  type PolicyBackend,
  type SamplingClient,
  type TrainingClient,
  type UntypedApiFuture,
} from '@rx/backend';
import { z, type ZodType, type ZodTypeDef } from 'zod';
import { apiError, invalidRequest } from './api-error';
import { ARCHIVE_DOWNLOAD_PREFIX } from './auth';
import type { PolicyServerConfig } from './config';
import { FutureStore, ResultBudgetError, errorCategory } from './futures.store';
import { IdempotencyCache } from './idempotency.cache';
import { LogprobNoise } from './hosted-like.noise';
import { ModelLimitChecks, checkSeed } from './model-limits';
import { ComputeLane } from './compute-lane';
import { ModelSequencer, SeqConflictError } from './model-sequencer';
import { PathIndex } from './path-index';
import { ServerMetrics } from './server-metrics';
import { POLICY_BACKEND, POLICY_SERVER_CONFIG } from './tokens';

interface ModelRecord {
  modelId: string;
  sessionId: string;
  baseModel: string;
  rank: number;
  client: TrainingClient;
  sequencer: ModelSequencer;
  /** the answers to recent seq_ids, so a resent request (same seq_id, same body) gets its first future */
  recent: Map<number, { fingerprint: string; answer: Promise<UntypedApiFuture> }>;
}

/** A retrieve_future answer: JSON, or protobuf bytes for a client that accepts them. */
export type RetrievedFuture = { json: unknown } | { protobuf: Uint8Array };

/** seq_ids whose answers are kept per model for resends */
const RECENT_SEQ_IDS_KEPT = 1024;

const trainingIdsSchema = z.object({ model_id: z.string().min(1), seq_id: z.number().int().positive() });

interface SamplerRecord {
  samplerId: string;
  baseModel: string;
  modelPath: string | null;
  client: SamplingClient;
}

/** A failure the caller caused; reported with category 'user'. */
class CallerError extends Error {
  readonly category = 'user' as const;
}

/**
 * The name a checkpoint gets in the backend: `<model id as a path segment>/<name>`, so that two training
 * clients (two arms) saving the same tinker name do not overwrite each other in a backend keyed by name.
 */
export function backendCheckpointName(modelId: string, name: string): string {
  return `${modelId.replace(/[^A-Za-z0-9._-]/g, '-')}/${name}`;
}

const modelIdBodySchema = z.object({ model_id: z.string().min(1) });

function parse<T>(what: string, schema: ZodType<T, ZodTypeDef, unknown>, body: unknown): T {
  const parsed = schema.safeParse(body);
  if (!parsed.success) throw invalidRequest(what, parsed.error);
  return parsed.data;
}

/** how long a checkpoint archive's URL is valid (the SDK assumes 15 minutes when a 302 carries no Expires) */
const ARCHIVE_URL_TTL_MS = 15 * 60_000;

/** samplers opened by model_path kept at most (each holds a copy of its weights) */
const SAMPLERS_BY_PATH_KEPT = 32;

@Injectable()
export class TinkerApiService implements OnModuleDestroy {
  readonly futures: FutureStore;
  readonly metrics: ServerMetrics;
  private readonly idempotency: IdempotencyCache;
  private readonly paths: PathIndex;
  private readonly limits: ModelLimitChecks;
  private readonly sessions = new Map<string, { createdAt: number; lastHeartbeatAt: number }>();
  private readonly models = new Map<string, ModelRecord>();
  private readonly reservedModelIds = new Set<string>();
  /** the create_model request behind each model id, so a resend gets its first future */
  private readonly modelRequests = new Map<string, { fingerprint: string; answer: Promise<UntypedApiFuture> }>();
  private readonly samplers = new Map<string, SamplerRecord>();
  /** samplers opened by an asample that names its model_path instead of a session (most recent last) */
  private readonly samplersByPath = new Map<string, Promise<SamplingClient>>();
  /** results that have a protobuf form (SampleResponse, ForwardBackwardOutput) */
  private readonly protoResults = new WeakMap<object, 'sample' | 'forward_backward'>();
  /** signed archive URLs handed out: token -> the backend's checkpoint path, until it expires */
  private readonly archives = new Map<string, { backendPath: string; expiresAt: number }>();
  /** hosted-like logprob noise on forward_backward (null: exact) */
  private readonly noise: LogprobNoise | null;
  /** the model's compute, one request at a time with the event loop turning between them (compute-lane.ts) */
  private readonly lane = new ComputeLane();

  constructor(
    @Inject(POLICY_SERVER_CONFIG) private readonly config: PolicyServerConfig,
    @Inject(POLICY_BACKEND) private readonly backend: PolicyBackend,
  ) {
    this.metrics = new ServerMetrics(() => this.futures.pendingCount());
    this.futures = new FutureStore(config.futureTtlMs, (outcome) => this.metrics.futuresSettled.inc({ outcome }), config);
    this.limits = new ModelLimitChecks(backend, config);
    this.idempotency = new IdempotencyCache(config.futureTtlMs);
    this.paths = new PathIndex(config.dataDir);
    const noise = config.hostedLike?.faults.logprob_noise;
    this.noise = noise && noise.amplitude > 0 ? new LogprobNoise(noise.amplitude, noise.seed) : null;
  }

  onModuleDestroy(): void {
    for (const m of this.models.values()) m.sequencer.close();
    this.futures.close();
    this.metrics.stop();
  }

  get backendKind(): PolicyBackend['kind'] {
    return this.backend.kind;
  }

  ping(): Promise<boolean> {
    return this.backend.ping();
  }

  // ---- startup and sessions ----

  clientConfig(body: unknown): Record<string, unknown> {
    parse('client/config', z.object({ sdk_version: z.string() }), body);
    return {
      pjwt_auth_enabled: false,
      // forward_backward bodies may come zstd-compressed (protobufBodyMiddleware inflates them)
      proto_compress_fwdbwd: true,
      parallel_fwdbwd_chunks: false,
      // the SDK's optional Rust transport is not needed against a local server
      use_pyqwest_transport: false,
      // create_training_client_from_state goes through weights_info, create_model, load_weights
      create_model_via_load_weights: false,
      fwdbwd_max_chunk_len: this.config.fwdbwdMaxChunkLen,
      fwdbwd_max_chunk_bytes_count: Math.max(1024, Math.floor(this.config.maxBodyBytes / 2)),
    };
  }

  dynamicConfig(): Record<string, unknown> {
    return { refresh_interval_sec: 300 };
  }

  createSession(body: unknown, key: string | undefined): Promise<Record<string, unknown>> {
    parse('create_session', createSessionRequestSchema, body);
    return this.idempotency.run('create_session', key, async () => {
      const sessionId = randomUUID();
      this.sessions.set(sessionId, { createdAt: Date.now(), lastHeartbeatAt: Date.now() });
      return { session_id: sessionId, type: 'create_session' };
    });
  }

  heartbeat(body: unknown): Record<string, unknown> {
    const { session_id } = parse('session_heartbeat', sessionHeartbeatRequestSchema, body);
    const session = this.sessions.get(session_id);
    if (!session) throw apiError(404, `unknown session_id '${session_id}'`);
    session.lastHeartbeatAt = Date.now();
    return { type: 'session_heartbeat' };
  }

  /** hosted-like lost sessions: every session is forgotten, with its models and samplers (their calls answer 404) */
  loseSessions(): number {
    const lost = this.sessions.size;
    for (const [id, m] of this.models) {
      if (this.sessions.has(m.sessionId)) {
        m.sequencer.close();
        this.models.delete(id);
      }
    }
    for (const id of [...this.samplers.keys()]) if (this.sessions.has(id.split(':sample:')[0])) this.samplers.delete(id);
    this.sessions.clear();
    return lost;
  }

  private requireSession(sessionId: string): void {
    if (!this.sessions.has(sessionId)) throw apiError(404, `unknown session_id '${sessionId}'; call create_session first`);
  }

  // ---- training ----

  async createModel(body: unknown, key: string | undefined): Promise<UntypedApiFuture> {
    const req = parse('create_model', createModelRequestSchema, body);
    this.requireSession(req.session_id);
    if (this.config.hostedLike?.refuse_model_seed && req.lora_config.seed !== undefined && req.lora_config.seed !== null) {
      throw apiError(400, 'create_model: lora_config.seed is not supported by this service (per-model seeds are refused); create the model without it');
    }
    if (this.config.hostedLike?.faults.unserved_models?.includes(req.base_model)) {
      throw apiError(400, `create_model: base_model '${req.base_model}' is not served here`);
    }
    await this.limits.checkNewModel(req.base_model, req.lora_config.rank, req.lora_config.seed);
    const modelId = `${req.session_id}:train:${req.model_seq_id}`;
    // the same request again under a new idempotency key (the SDK's application-level retry): its first future
    const fingerprint = createHash('sha256').update(JSON.stringify(req)).digest('hex');
    const earlier = this.modelRequests.get(modelId);
    if (earlier?.fingerprint === fingerprint) return earlier.answer;
    return this.idempotency.run('create_model', key, async () => {
      if (this.models.has(modelId) || this.reservedModelIds.has(modelId)) {
        throw apiError(409, `model_seq_id ${req.model_seq_id} was already used in this session`);
      }
      this.limits.checkRoom(this.models.size + this.reservedModelIds.size);
      this.admitWork();
      this.reservedModelIds.add(modelId);
      const work = (async () => {
        try {
          const client = await this.backend.createLoraTrainingClient({
            baseModel: req.base_model,
            rank: req.lora_config.rank,
            seed: req.lora_config.seed ?? 0,
          });
          this.models.set(modelId, {
            modelId,
            sessionId: req.session_id,
            baseModel: req.base_model,
            rank: req.lora_config.rank,
            client,
            sequencer: new ModelSequencer(this.config.seqGapTimeoutMs),
            recent: new Map(),
          });
          return { model_id: modelId, type: 'create_model' };
        } finally {
          this.reservedModelIds.delete(modelId);
        }
      })();
      const answer = { request_id: this.futures.create(work), model_id: modelId };
      this.modelRequests.set(modelId, { fingerprint, answer: Promise.resolve(answer) });
      return answer;
    });
  }

  getInfo(body: unknown): Record<string, unknown> {
    const { model_id } = parse('get_info', modelIdBodySchema, body);
    const m = this.model(model_id);
    return {
      model_id,
      model_data: { model_name: m.baseModel, tokenizer_id: m.baseModel },
      is_lora: true,
      lora_rank: m.rank,
      model_name: m.baseModel,
      type: 'get_info',
    };
  }

  /** forward_backward: a JSON body (SDK <= 0.24), or a ForwardBackwardRequest protobuf (0.25; forward_only = forward). */
  forwardBackward(body: unknown, key: string | undefined): Promise<UntypedApiFuture> {
    if (body instanceof Uint8Array) {
      let decoded: { request: unknown; forwardOnly: boolean };
      try {
        decoded = decodeForwardBackwardRequest(body);
      } catch (err) {
        if (err instanceof ProtoWireError) throw apiError(400, `forward_backward: ${err.message}`);
        throw err;
      }
      return this.runPass(decoded.forwardOnly ? 'forward' : 'forward_backward', decoded.request, key);
    }
    return this.runPass('forward_backward', body, key);
  }

  /** forward (SDK <= 0.24.1): `{model_id, seq_id, forward_input}`, the same pass with no gradient kept. */
  async forward(body: unknown, key: string | undefined): Promise<UntypedApiFuture> {
    const req = await this.refusing('forward', body, () => parse('forward', forwardRequestSchema, body));
    return this.runPass('forward', { model_id: req.model_id, seq_id: req.seq_id, forward_backward_input: req.forward_input }, key);
  }

  private async runPass(endpoint: 'forward' | 'forward_backward', body: unknown, key: string | undefined): Promise<UntypedApiFuture> {
    const { req, datums } = await this.refusing(endpoint, body, async () => {
      const req: ForwardBackwardRequest = parse(endpoint, forwardBackwardRequestSchema, body);
      const input = req.forward_backward_input;
      if (input.loss_fn !== 'importance_sampling') {
        throw apiError(400, `loss_fn '${input.loss_fn}' is not supported by this server (importance_sampling only)`);
      }
      if (input.data.length === 0) throw apiError(400, `${endpoint}: forward_backward_input.data is empty`);
      let datums: Datum[];
      try {
        // a sparse tensor expands to at most the request's token limit (one value per position)
        const limit = this.config.maxTokensPerRequest;
        datums = input.data.map((d, i) => wireToDatum(d, i, limit));
      } catch (err) {
        if (err instanceof DatumShapeError) throw apiError(400, `${endpoint}: ${err.message}${err instanceof DenseSizeError ? ' (RX_POLICY_MAX_TOKENS_PER_REQUEST)' : ''}`);
        throw err;
      }
      this.checkTokens(endpoint, datums.reduce((n, d) => n + d.inputTokens.length, 0));
      if (endpoint === 'forward' && !this.model(req.model_id).client.forward) {
        throw apiError(400, 'forward: this backend has no forward-only pass');
      }
      const sequences = datums.flatMap((d, i) => [
        { what: `datum ${i} model_input`, tokens: d.inputTokens },
        { what: `datum ${i} target_tokens`, tokens: d.targetTokens },
      ]);
      await this.limits.checkSequences(endpoint, this.model(req.model_id).baseModel, sequences);
      return { req, datums };
    });
    return this.submitTraining(endpoint, key, req.model_id, req.seq_id, req, async (m) => {
      const exact = endpoint === 'forward' ? await m.client.forward!(datums, 'importance_sampling') : await m.client.forwardBackward(datums, 'importance_sampling');
      const res = this.noise ? this.noise.apply(datums, exact) : exact;
      const out: ForwardBackwardOutput = {
        loss_fn_output_type: 'importance_sampling',
        loss_fn_outputs: res.logprobs.map((lp) => ({ logprobs: { data: lp, dtype: 'float32', shape: [lp.length] } })),
        metrics: { 'loss:sum': res.loss },
      };
      this.protoResults.set(out, 'forward_backward');
      return out;
    });
  }

  async optimStep(body: unknown, key: string | undefined): Promise<UntypedApiFuture> {
    const req = await this.refusing('optim_step', body, () => {
      const req = parse('optim_step', optimStepRequestSchema, body);
      if (req.adam_params.grad_clip_norm > 0) throw apiError(400, 'optim_step: grad_clip_norm > 0 is not supported by this server');
      return req;
    });
    const adam = req.adam_params;
    return this.submitTraining('optim_step', key, req.model_id, req.seq_id, req, async (m) => {
      const { step } = await m.client.optimStep({
        learningRate: adam.learning_rate,
        beta1: adam.beta1,
        beta2: adam.beta2,
        eps: adam.eps,
        weightDecay: adam.weight_decay,
      });
      return { metrics: { 'step:max': step } };
    });
  }

  async saveWeights(body: unknown, key: string | undefined): Promise<UntypedApiFuture> {
    const { req, name } = await this.refusing('save_weights', body, () => {
      const req = parse('save_weights', saveWeightsRequestSchema, body);
      const name = req.path ?? `state-${req.seq_id}`;
      this.checkName('save_weights', name);
      return { req, name };
    });
    return this.submitTraining('save_weights', key, req.model_id, req.seq_id, req, async (m) => {
      const tinkerPath = formatTinkerPath({ runId: m.modelId, kind: 'weights', name });
      if (this.paths.has(tinkerPath) && !req.overwrite) {
        throw new CallerError(`training state '${tinkerPath}' already exists; save under another name or send overwrite: true`);
      }
      const backendPath = await m.client.saveState(backendCheckpointName(m.modelId, name));
      this.paths.set(tinkerPath, { backendPath, baseModel: m.baseModel, loraRank: m.rank });
      return { path: tinkerPath, type: 'save_weights' };
    });
  }

  /** load_weights into an existing training client: weights and optimizer state, or (optimizer: false) weights only. */
  async loadWeights(body: unknown, key: string | undefined): Promise<UntypedApiFuture> {
    const { req, modelId, seq } = await this.refusing('load_weights', body, () => {
      const req = parse('load_weights', loadWeightsRequestSchema, body);
      if (!req.model_id || !req.seq_id) {
        throw apiError(400, 'load_weights: this server loads into an existing training client (send model_id and seq_id; client/config says create_model_via_load_weights: false)');
      }
      if (parseTinkerPath(req.path)?.kind !== 'weights') {
        throw apiError(400, `load_weights: '${req.path}' is not a tinker://<run>/weights/<name> path from save_weights`);
      }
      if (!req.optimizer && !this.model(req.model_id).client.loadWeights) {
        throw apiError(400, 'load_weights: this backend loads weights together with the optimizer state only (optimizer: true)');
      }
      return { req, modelId: req.model_id, seq: req.seq_id };
    });
    return this.submitTraining('load_weights', key, modelId, seq, req, async (m) => {
      const entry = this.paths.get(req.path);
      if (!entry) throw new CallerError(`no training state at '${req.path}'`);
      if (entry.baseModel !== m.baseModel) {
        throw new CallerError(`'${req.path}' was saved from base model ${entry.baseModel}, this model is ${m.baseModel}`);
      }
      if (req.optimizer) await m.client.loadState(entry.backendPath);
      else await m.client.loadWeights!(entry.backendPath);
      return { path: req.path, type: 'load_weights' };
    });
  }

  async saveWeightsForSampler(body: unknown, key: string | undefined): Promise<UntypedApiFuture> {
    const { req, name } = await this.refusing('save_weights_for_sampler', body, () => {
      const req = parse('save_weights_for_sampler', saveWeightsForSamplerRequestSchema, body);
      if (!req.path && (req.sampling_session_seq_id === undefined || req.sampling_session_seq_id === null)) {
        throw apiError(400, 'save_weights_for_sampler: send a path (a name) or a sampling_session_seq_id');
      }
      const name = req.path ?? `ephemeral-${req.seq_id}`;
      this.checkName('save_weights_for_sampler', name);
      return { req, name };
    });
    const ephemeralSeq = req.sampling_session_seq_id;
    return this.submitTraining('save_weights_for_sampler', key, req.model_id, req.seq_id, req, async (m) => {
      const backendPath = await m.client.saveWeightsForSampler(backendCheckpointName(m.modelId, name));
      if (req.path) {
        const tinkerPath = formatTinkerPath({ runId: m.modelId, kind: 'sampler_weights', name });
        this.paths.set(tinkerPath, { backendPath, baseModel: m.baseModel });
        return { path: tinkerPath, type: 'save_weights_for_sampler' };
      }
      const samplerId = `${m.sessionId}:sample:${ephemeralSeq}`;
      if (this.samplers.has(samplerId)) throw new CallerError(`sampling_session_seq_id ${ephemeralSeq} was already used`);
      const client = await this.backend.createSamplingClient(backendPath);
      this.samplers.set(samplerId, { samplerId, baseModel: m.baseModel, modelPath: null, client });
      return { path: null, sampling_session_id: samplerId, type: 'save_weights_for_sampler' };
    });
  }

  unloadModel(body: unknown, key: string | undefined): Promise<UntypedApiFuture> {
    const { model_id } = parse('unload_model', modelIdBodySchema, body);
    this.model(model_id);
    return this.idempotency.run('unload_model', key, async () => {
      this.admitWork();
      const work = Promise.resolve().then(() => {
        this.models.delete(model_id);
        return { model_id, type: 'unload_model' };
      });
      return { request_id: this.futures.create(work), model_id };
    });
  }

  /**
   * Runs the checks of a training request. When they refuse it (a 4xx) and its model_id and seq_id are
   * readable, the seq_id counts as used, as on the service: the SDK does not resend a refused seq_id, so
   * later requests must not wait for it.
   */
  private async refusing<T>(endpoint: string, body: unknown, check: () => T | Promise<T>): Promise<T> {
    try {
      return await check();
    } catch (err) {
      const ids = trainingIdsSchema.safeParse(body);
      if (ids.success && err instanceof HttpException && err.getStatus() >= 400 && err.getStatus() < 500) {
        this.models.get(ids.data.model_id)?.sequencer.refuse(ids.data.seq_id);
      }
      throw err;
    }
  }

  /**
   * Queues a training request as `seq` of its model. A request sent again with the same seq_id and the same
   * body (the SDK resends with a new idempotency key when its HTTP retries ran out) gets the first future; the
   * same seq_id with another body is a conflict (409).
   */
  private submitTraining(
    endpoint: string,
    key: string | undefined,
    modelId: string,
    seq: number,
    request: unknown,
    run: (m: ModelRecord) => Promise<unknown>,
  ): Promise<UntypedApiFuture> {
    const model = this.model(modelId);
    const fingerprint = createHash('sha256').update(endpoint).update('\u0000').update(JSON.stringify(request)).digest('hex');
    const earlier = model.recent.get(seq);
    if (earlier?.fingerprint === fingerprint) return earlier.answer;
    return this.idempotency.run(endpoint, key, async () => {
      this.admitWork();
      let work: Promise<unknown>;
      try {
        work = model.sequencer.enqueue(seq, () => this.lane.run(() => run(model)));
      } catch (err) {
        if (err instanceof SeqConflictError) throw apiError(409, `${endpoint}: ${err.message}`);
        throw err;
      }
      const answer: UntypedApiFuture = { request_id: this.futures.create(work), model_id: modelId };
      model.recent.set(seq, { fingerprint, answer: Promise.resolve(answer) });
      if (model.recent.size > RECENT_SEQ_IDS_KEPT) model.recent.delete(model.recent.keys().next().value as number);
      return answer;
    });
  }

  /** New work is refused (429) while too many results, or too many bytes of them, wait to be fetched. */
  private admitWork(): void {
    try {
      this.futures.admit();
    } catch (err) {
      if (err instanceof ResultBudgetError) throw apiError(429, err.message);
      throw err;
    }
  }

  private model(modelId: string): ModelRecord {
    const m = this.models.get(modelId);
    if (!m) throw apiError(404, `unknown model_id '${modelId}'`);
    return m;
  }

  private checkName(endpoint: string, name: string): void {
    if (!isValidCheckpointName(name)) {
      throw apiError(400, `${endpoint}: '${name}' is not a checkpoint name (letters, digits, '.', '_', '-')`);
    }
  }

  private checkTokens(endpoint: string, tokens: number): void {
    const limit = this.config.maxTokensPerRequest;
    if (tokens > limit) {
      throw apiError(400, `${endpoint}: ${tokens} tokens in one request; this server takes at most ${limit} (RX_POLICY_MAX_TOKENS_PER_REQUEST)`);
    }
  }

  // ---- sampling ----

  createSamplingSession(body: unknown, key: string | undefined): Promise<Record<string, unknown>> {
    const req = parse('create_sampling_session', createSamplingSessionRequestSchema, body);
    this.requireSession(req.session_id);
    if (!req.model_path) {
      throw apiError(400, 'create_sampling_session: send model_path (a tinker:// path from save_weights_for_sampler); sampling a bare base model is not supported here');
    }
    const modelPath = req.model_path;
    if (parseTinkerPath(modelPath)?.kind !== 'sampler_weights') {
      throw apiError(400, `create_sampling_session: '${modelPath}' is not a tinker://<run>/sampler_weights/<name> path`);
    }
    const entry = this.paths.get(modelPath);
    // 400, not 404: a 404 on a session's call means the session is gone (the client starts a new one)
    if (!entry) throw apiError(400, `create_sampling_session: no sampler weights at '${modelPath}'`);
    const samplerId = `${req.session_id}:sample:${req.sampling_session_seq_id}`;
    // the same request again under a new idempotency key (the SDK's application-level retry): the same session
    if (this.samplers.get(samplerId)?.modelPath === modelPath) return Promise.resolve({ sampling_session_id: samplerId, type: 'create_sampling_session' });
    return this.idempotency.run('create_sampling_session', key, async () => {
      if (this.samplers.has(samplerId)) throw apiError(409, `sampling_session_seq_id ${req.sampling_session_seq_id} was already used in this session`);
      let client: SamplingClient;
      try {
        client = await this.backend.createSamplingClient(entry.backendPath);
      } catch (err) {
        const message = err instanceof Error ? err.message : String(err);
        throw apiError(errorCategory(err) === 'user' ? 400 : 500, `create_sampling_session: ${message}`);
      }
      this.samplers.set(samplerId, { samplerId, baseModel: entry.baseModel, modelPath, client });
      return { sampling_session_id: samplerId, type: 'create_sampling_session' };
    });
  }

  /**
   * The sampler of an asample that names its weights by model_path (no create_sampling_session round trip):
   * checked now (400/404 before any work), opened once per path and kept for the next requests, the 32 most recent.
   */
  private samplerForPath(modelPath: string): () => Promise<SamplingClient> {
    if (parseTinkerPath(modelPath)?.kind !== 'sampler_weights') throw apiError(400, `asample: '${modelPath}' is not a tinker://<run>/sampler_weights/<name> path`);
    const entry = this.paths.get(modelPath);
    if (!entry) throw apiError(404, `asample: no sampler weights at '${modelPath}'`);
    return () => {
      let opened = this.samplersByPath.get(modelPath);
      if (opened) {
        this.samplersByPath.delete(modelPath);
      } else {
        opened = this.backend.createSamplingClient(entry.backendPath).catch((err: unknown) => {
          this.samplersByPath.delete(modelPath);
          const message = err instanceof Error ? err.message : String(err);
          throw apiError(errorCategory(err) === 'user' ? 400 : 500, `asample: ${message}`);
        });
      }
      this.samplersByPath.set(modelPath, opened);
      while (this.samplersByPath.size > SAMPLERS_BY_PATH_KEPT) this.samplersByPath.delete(this.samplersByPath.keys().next().value as string);
      return opened;
    };
  }

  getSampler(samplerId: string): Record<string, unknown> {
    const s = this.samplers.get(samplerId);
    if (!s) throw apiError(404, `unknown sampler '${samplerId}'`);
    return { sampler_id: s.samplerId, base_model: s.baseModel, model_path: s.modelPath };
  }

  async asample(body: unknown, key: string | undefined): Promise<UntypedApiFuture> {
    const req = parse('asample', sampleRequestSchema, body);
    let samplerClient: () => Promise<SamplingClient>;
    let baseModel: string;
    if (req.sampling_session_id) {
      const sampler = this.samplers.get(req.sampling_session_id);
      if (!sampler) throw apiError(404, `asample: unknown sampling_session_id '${req.sampling_session_id}'`);
      samplerClient = () => Promise.resolve(sampler.client);
      baseModel = sampler.baseModel;
    } else if (req.model_path) {
      samplerClient = this.samplerForPath(req.model_path);
      baseModel = (this.paths.get(req.model_path) as { baseModel: string }).baseModel;
    } else {
      throw apiError(400, 'asample: send sampling_session_id (from create_sampling_session) or model_path (a tinker:// sampler_weights path)');
    }
    const p = req.sampling_params;
    if (p.max_tokens === undefined || p.max_tokens === null) throw apiError(400, 'asample: sampling_params.max_tokens is required');
    const maxTokens = p.max_tokens;
    const stop = p.stop ?? [];
    if (typeof stop === 'string' || stop.some((s) => typeof s !== 'number')) {
      throw apiError(400, 'asample: sampling_params.stop must be token ids on this server (stop strings are not supported)');
    }
    const stopTokens = stop as number[];
    if (p.top_k !== -1 || p.top_p !== 1) throw apiError(400, 'asample: top_k and top_p are not supported by this server (send -1 and 1)');
    if (req.topk_prompt_logprobs > 0) throw apiError(400, 'asample: topk_prompt_logprobs is not supported by this server');
    let prompt: number[];
    try {
      prompt = modelInputToTokens(req.prompt);
    } catch (err) {
      if (err instanceof DatumShapeError) throw apiError(400, `asample: ${err.message}`);
      throw err;
    }
    if (prompt.length === 0) throw apiError(400, 'asample: the prompt is empty');
    this.checkTokens('asample', prompt.length + req.num_samples * maxTokens);
    checkSeed('asample', 'sampling_params.seed', p.seed);
    await this.limits.checkSequences('asample', baseModel, [{ what: 'the prompt', tokens: prompt }]);
    return this.idempotency.run('asample', key, async () => {
      this.admitWork();
      const work = (async () => {
        const client = await samplerClient();
        const { sequences, promptLogprobs } = await this.lane.run(async () => ({
          sequences: await client.sample(prompt, req.num_samples, {
            maxTokens,
            temperature: p.temperature,
            stopTokens,
            ...(p.seed !== undefined && p.seed !== null ? { seed: p.seed } : {}),
          }),
          promptLogprobs: req.prompt_logprobs ? await client.computeLogprobs(prompt) : undefined,
        }));
        const res: SampleResponse = {
          sequences: sequences.map((s) => ({ stop_reason: s.stopReason, tokens: s.tokens, logprobs: s.logprobs })),
          ...(promptLogprobs ? { prompt_logprobs: promptLogprobs } : {}),
          prompt_cache_hit_tokens: 0,
          type: 'sample',
        };
        this.protoResults.set(res, 'sample');
        return res;
      })();
      return { request_id: this.futures.create(work) };
    });
  }

  // ---- futures ----

  /**
   * retrieve_future: long-polls, then answers the result, try_again, or `{error, category}`. Sample and
   * forward/backward results go out as protobuf when the client accepts it (SDK >= 0.18.1; 0.25 accepts nothing
   * else), as JSON otherwise.
   */
  async retrieveFuture(body: unknown, acceptsProtobuf = false): Promise<RetrievedFuture> {
    const req = parse('retrieve_future', retrieveFutureRequestSchema, body);
    const outcome = await this.futures.wait(req.request_id, this.config.longPollMs);
    switch (outcome.status) {
      case 'unknown':
        throw apiError(404, `unknown request_id '${req.request_id}'`);
      case 'expired':
        throw apiError(410, `the result of '${req.request_id}' has expired (kept ${this.config.futureTtlMs} ms)`);
      case 'pending':
        return { json: { type: 'try_again', request_id: req.request_id, queue_state: 'active' } };
      case 'failed':
        return { json: { error: outcome.error, category: outcome.category } };
      case 'done': {
        const result = outcome.result;
        const kind = acceptsProtobuf && result && typeof result === 'object' ? this.protoResults.get(result) : undefined;
        if (kind === 'sample') return { protobuf: encodeSampleResponse(result as SampleResponse) };
        if (kind === 'forward_backward') return { protobuf: encodeForwardBackwardOutput(result as ForwardBackwardOutput) };
        return { json: result };
      }
    }
  }

  // ---- capabilities and checkpoints ----

  /** The served models, each with the largest LoRA rank create_model takes (an rx field the SDK ignores). */
  async getServerCapabilities(): Promise<Record<string, unknown>> {
    const unserved = this.config.hostedLike?.faults.unserved_models ?? [];
    const names = (this.backend.supportedModels?.() ?? []).filter((n) => !unserved.includes(n));
    const models = await Promise.all(
      names.map(async (model_name) => {
        const limits = await this.limits.of('get_server_capabilities', model_name).catch(() => undefined);
        const max_lora_rank = Math.min(this.config.maxLoraRank, limits?.maxLoraRank ?? Number.POSITIVE_INFINITY);
        return { model_name, max_context_length: this.config.maxTokensPerRequest, ...(Number.isFinite(max_lora_rank) ? { max_lora_rank } : {}) };
      }),
    );
    return { supported_models: models };
  }

  /**
   * get_checkpoint_archive_url: a signed URL of the archive of a checkpoint this server saved, valid
   * ARCHIVE_URL_TTL_MS: RX_POLICY_PUBLIC_URL when set, else `origin` (the request's protocol and Host), then
   * ARCHIVE_DOWNLOAD_PREFIX and a random token. In the hosted-like mode with no_archive_route, a 404 as for a route
   * the server does not have.
   */
  checkpointArchiveUrl(runId: string, kind: string, name: string, url: string, origin: string): { location: string; expires: Date } {
    if (this.config.hostedLike?.no_archive_route) throw new NotFoundException(`Cannot GET ${url}`);
    if (kind !== 'weights' && kind !== 'sampler_weights') throw apiError(400, `archive: '${kind}' is not a checkpoint kind (weights or sampler_weights)`);
    const tinkerPath = formatTinkerPath({ runId, kind, name });
    const entry = this.paths.get(tinkerPath);
    if (!entry) throw apiError(404, `archive: no checkpoint at '${tinkerPath}'`);
    if (!this.backend.adapterWeights) throw apiError(501, `archive: the ${this.backend.kind} backend of this server cannot hand out checkpoint bytes`);
    const now = Date.now();
    for (const [t, a] of this.archives) if (a.expiresAt <= now) this.archives.delete(t);
    const token = randomBytes(32).toString('hex');
    const expires = new Date(now + ARCHIVE_URL_TTL_MS);
    this.archives.set(token, { backendPath: entry.backendPath, expiresAt: expires.getTime() });
    return { location: `${this.config.publicUrl ?? origin}${ARCHIVE_DOWNLOAD_PREFIX}${token}`, expires };
  }

  /** The archive (tar) behind a token of checkpointArchiveUrl; 404 once it has expired or for a token never given. */
  async archiveBytes(token: string): Promise<Uint8Array> {
    const a = this.archives.get(token);
    if (!a || a.expiresAt <= Date.now()) throw apiError(404, 'archive: this URL is unknown or has expired; ask GET …/archive again');
    return writeCheckpointArchive(await (this.backend.adapterWeights as NonNullable<PolicyBackend['adapterWeights']>)(a.backendPath));
  }

  /** weights_info: what create_training_client_from_state needs to make a matching LoRA client. */
  weightsInfo(body: unknown): Record<string, unknown> {
    const req = parse('weights_info', weightsInfoRequestSchema, body);
    if (parseTinkerPath(req.tinker_path)?.kind !== 'weights') {
      throw apiError(400, `weights_info: '${req.tinker_path}' is not a tinker://<run>/weights/<name> path from save_weights`);
    }
    const entry = this.paths.get(req.tinker_path);
    if (!entry) throw apiError(404, `weights_info: no training state at '${req.tinker_path}'`);
    if (entry.loraRank === undefined) throw apiError(404, `weights_info: '${req.tinker_path}' was saved before this server recorded LoRA ranks`);
    return { base_model: entry.baseModel, is_lora: true, lora_rank: entry.loraRank, train_unembed: true, train_mlp: true, train_attn: true };
  }
}
