// The LoRA training models: create_model, get_info and unload_model, and how a training request is queued on its
// model (submitTraining: in seq_id order, a resend answered with its first future, a refused seq_id consumed).
import { createHash } from 'node:crypto';
import { HttpException, Injectable, type OnModuleDestroy } from '@nestjs/common';
import { createModelRequestSchema, type TrainingClient, type UntypedApiFuture } from '@rx/backend';
import { z } from 'zod';
import { apiError, parseRequest } from './api-error';
import { ModelSequencer, SeqConflictError } from './model-sequencer';
import { PolicyServerContext } from './policy-server.context';
import { SessionsService } from './sessions.service';

export interface TrainingModel {
  modelId: string;
  sessionId: string;
  baseModel: string;
  rank: number;
  client: TrainingClient;
  sequencer: ModelSequencer;
  /** the answers to recent seq_ids, so a resent request (same seq_id, same body) gets its first future */
  recent: Map<number, { fingerprint: string; answer: Promise<UntypedApiFuture> }>;
}

/** seq_ids whose answers are kept per model for resends */
const RECENT_SEQ_IDS_KEPT = 1024;

const trainingIdsSchema = z.object({ model_id: z.string().min(1), seq_id: z.number().int().positive() });
const modelIdBodySchema = z.object({ model_id: z.string().min(1) });

@Injectable()
export class TrainingModelsService implements OnModuleDestroy {
  private readonly models = new Map<string, TrainingModel>();
  private readonly reservedModelIds = new Set<string>();
  /** the create_model request behind each model id, so a resend gets its first future */
  private readonly modelRequests = new Map<string, { fingerprint: string; answer: Promise<UntypedApiFuture> }>();

  constructor(
    private readonly ctx: PolicyServerContext,
    private readonly sessions: SessionsService,
  ) {}

  onModuleDestroy(): void {
    for (const m of this.models.values()) m.sequencer.close();
  }

  async createModel(body: unknown, key: string | undefined): Promise<UntypedApiFuture> {
    const { config, backend, limits, futures } = this.ctx;
    const req = parseRequest('create_model', createModelRequestSchema, body);
    this.sessions.requireSession(req.session_id);
    if (config.hostedLike?.refuse_model_seed && req.lora_config.seed !== undefined && req.lora_config.seed !== null) {
      throw apiError(400, 'create_model: lora_config.seed is not supported by this service (per-model seeds are refused); create the model without it');
    }
    if (config.hostedLike?.faults.unserved_models?.includes(req.base_model)) {
      throw apiError(400, `create_model: base_model '${req.base_model}' is not served here`);
    }
    await limits.checkNewModel(req.base_model, req.lora_config.rank, req.lora_config.seed);
    const modelId = `${req.session_id}:train:${req.model_seq_id}`;
    // the same request again under a new idempotency key (the SDK's application-level retry): its first future
    const fingerprint = createHash('sha256').update(JSON.stringify(req)).digest('hex');
    const earlier = this.modelRequests.get(modelId);
    if (earlier?.fingerprint === fingerprint) return earlier.answer;
    return this.ctx.idempotency.run('create_model', key, async () => {
      if (this.models.has(modelId) || this.reservedModelIds.has(modelId)) {
        throw apiError(409, `model_seq_id ${req.model_seq_id} was already used in this session`);
      }
      limits.checkRoom(this.models.size + this.reservedModelIds.size);
      this.ctx.admitWork();
      this.reservedModelIds.add(modelId);
      const work = (async () => {
        try {
          const client = await backend.createLoraTrainingClient({
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
            sequencer: new ModelSequencer(config.seqGapTimeoutMs),
            recent: new Map(),
          });
          return { model_id: modelId, type: 'create_model' };
        } finally {
          this.reservedModelIds.delete(modelId);
        }
      })();
      const answer = { request_id: futures.create(work), model_id: modelId };
      this.modelRequests.set(modelId, { fingerprint, answer: Promise.resolve(answer) });
      return answer;
    });
  }

  getInfo(body: unknown): Record<string, unknown> {
    const { model_id } = parseRequest('get_info', modelIdBodySchema, body);
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

  unloadModel(body: unknown, key: string | undefined): Promise<UntypedApiFuture> {
    const { model_id } = parseRequest('unload_model', modelIdBodySchema, body);
    this.model(model_id);
    return this.ctx.idempotency.run('unload_model', key, async () => {
      this.ctx.admitWork();
      const work = Promise.resolve().then(() => {
        this.models.delete(model_id);
        return { model_id, type: 'unload_model' };
      });
      return { request_id: this.ctx.futures.create(work), model_id };
    });
  }

  /** the live model `modelId`; 404 otherwise */
  model(modelId: string): TrainingModel {
    const m = this.models.get(modelId);
    if (!m) throw apiError(404, `unknown model_id '${modelId}'`);
    return m;
  }

  /** hosted-like lost sessions: the models of `sessionIds` are gone (their calls answer 404) */
  forgetSessions(sessionIds: ReadonlySet<string>): void {
    for (const [id, m] of this.models) {
      if (sessionIds.has(m.sessionId)) {
        m.sequencer.close();
        this.models.delete(id);
      }
    }
  }

  /**
   * Runs the checks of a training request. When they refuse it (a 4xx) and its model_id and seq_id are
   * readable, the seq_id counts as used, as on the service: the SDK does not resend a refused seq_id, so
   * later requests must not wait for it.
   */
  async refusing<T>(body: unknown, check: () => T | Promise<T>): Promise<T> {
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
  submitTraining(
    endpoint: string,
    key: string | undefined,
    modelId: string,
    seq: number,
    request: unknown,
    run: (m: TrainingModel) => Promise<unknown>,
  ): Promise<UntypedApiFuture> {
    const model = this.model(modelId);
    const fingerprint = createHash('sha256').update(endpoint).update('\u0000').update(JSON.stringify(request)).digest('hex');
    const earlier = model.recent.get(seq);
    if (earlier?.fingerprint === fingerprint) return earlier.answer;
    return this.ctx.idempotency.run(endpoint, key, async () => {
      this.ctx.admitWork();
      let work: Promise<unknown>;
      try {
        work = model.sequencer.enqueue(seq, () => this.ctx.lane.run(() => run(model)));
      } catch (err) {
        if (err instanceof SeqConflictError) throw apiError(409, `${endpoint}: ${err.message}`);
        throw err;
      }
      const answer: UntypedApiFuture = { request_id: this.ctx.futures.create(work), model_id: modelId };
      model.recent.set(seq, { fingerprint, answer: Promise.resolve(answer) });
      if (model.recent.size > RECENT_SEQ_IDS_KEPT) model.recent.delete(model.recent.keys().next().value as number);
      return answer;
    });
  }
}
