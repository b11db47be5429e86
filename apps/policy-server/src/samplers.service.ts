// Sampling: create_sampling_session over saved sampler weights, GET samplers/:id, and asample, by a sampling
// session or straight by a model_path (the samplers opened that way are kept, the most recent few).
import { Injectable } from '@nestjs/common';
import {
  DatumShapeError,
  createSamplingSessionRequestSchema,
  modelInputToTokens,
  parseTinkerPath,
  sampleRequestSchema,
  type SampleResponse,
  type SamplingClient,
  type UntypedApiFuture,
} from '@rx/backend';
import { apiError, parseRequest } from './api-error';
import { errorCategory } from './futures.store';
import { checkSeed } from './model-limits';
import { PolicyServerContext } from './policy-server.context';
import { SessionsService } from './sessions.service';

interface SamplingSession {
  samplerId: string;
  sessionId: string;
  baseModel: string;
  modelPath: string | null;
  client: SamplingClient;
}

/** samplers opened by model_path kept at most (each holds a copy of its weights) */
const SAMPLERS_BY_PATH_KEPT = 32;

/** the id of a session's sampling session `seq` */
export function samplingSessionId(sessionId: string, seq: number | string): string {
  return `${sessionId}:sample:${seq}`;
}

@Injectable()
export class SamplersService {
  private readonly samplers = new Map<string, SamplingSession>();
  /** samplers opened by an asample that names its model_path instead of a session (most recent last) */
  private readonly samplersByPath = new Map<string, Promise<SamplingClient>>();

  constructor(
    private readonly ctx: PolicyServerContext,
    private readonly sessions: SessionsService,
  ) {}

  createSamplingSession(body: unknown, key: string | undefined): Promise<Record<string, unknown>> {
    const req = parseRequest('create_sampling_session', createSamplingSessionRequestSchema, body);
    this.sessions.requireSession(req.session_id);
    if (!req.model_path) {
      throw apiError(400, 'create_sampling_session: send model_path (a tinker:// path from save_weights_for_sampler); sampling a bare base model is not supported here');
    }
    const modelPath = req.model_path;
    if (parseTinkerPath(modelPath)?.kind !== 'sampler_weights') {
      throw apiError(400, `create_sampling_session: '${modelPath}' is not a tinker://<run>/sampler_weights/<name> path`);
    }
    const entry = this.ctx.paths.get(modelPath);
    // 400, not 404: a 404 on a session's call means the session is gone (the client starts a new one)
    if (!entry) throw apiError(400, `create_sampling_session: no sampler weights at '${modelPath}'`);
    const samplerId = samplingSessionId(req.session_id, req.sampling_session_seq_id);
    // the same request again under a new idempotency key (the SDK's application-level retry): the same session
    if (this.samplers.get(samplerId)?.modelPath === modelPath) return Promise.resolve({ sampling_session_id: samplerId, type: 'create_sampling_session' });
    return this.ctx.idempotency.run('create_sampling_session', key, async () => {
      if (this.samplers.has(samplerId)) throw apiError(409, `sampling_session_seq_id ${req.sampling_session_seq_id} was already used in this session`);
      let client: SamplingClient;
      try {
        client = await this.ctx.backend.createSamplingClient(entry.backendPath);
      } catch (err) {
        const message = err instanceof Error ? err.message : String(err);
        throw apiError(errorCategory(err) === 'user' ? 400 : 500, `create_sampling_session: ${message}`);
      }
      this.samplers.set(samplerId, { samplerId, sessionId: req.session_id, baseModel: entry.baseModel, modelPath, client });
      return { sampling_session_id: samplerId, type: 'create_sampling_session' };
    });
  }

  /** True when the sampling session `samplerId` exists. */
  has(samplerId: string): boolean {
    return this.samplers.has(samplerId);
  }

  /** A sampling session over weights that have no tinker:// path (save_weights_for_sampler with a sampling_session_seq_id). */
  openEphemeral(samplerId: string, sessionId: string, baseModel: string, client: SamplingClient): void {
    this.samplers.set(samplerId, { samplerId, sessionId, baseModel, modelPath: null, client });
  }

  /** hosted-like lost sessions: the sampling sessions of `sessionIds` are gone (their calls answer 404) */
  forgetSessions(sessionIds: ReadonlySet<string>): void {
    for (const [id, s] of this.samplers) if (sessionIds.has(s.sessionId)) this.samplers.delete(id);
  }

  getSampler(samplerId: string): Record<string, unknown> {
    const s = this.samplers.get(samplerId);
    if (!s) throw apiError(404, `unknown sampler '${samplerId}'`);
    return { sampler_id: s.samplerId, base_model: s.baseModel, model_path: s.modelPath };
  }

  async asample(body: unknown, key: string | undefined): Promise<UntypedApiFuture> {
    const req = parseRequest('asample', sampleRequestSchema, body);
    let samplerClient: () => Promise<SamplingClient>;
    let baseModel: string;
    if (req.sampling_session_id) {
      const sampler = this.samplers.get(req.sampling_session_id);
      if (!sampler) throw apiError(404, `asample: unknown sampling_session_id '${req.sampling_session_id}'`);
      samplerClient = () => Promise.resolve(sampler.client);
      baseModel = sampler.baseModel;
    } else if (req.model_path) {
      samplerClient = this.samplerForPath(req.model_path);
      baseModel = (this.ctx.paths.get(req.model_path) as { baseModel: string }).baseModel;
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
    this.ctx.checkTokens('asample', prompt.length + req.num_samples * maxTokens);
    checkSeed('asample', 'sampling_params.seed', p.seed);
    await this.ctx.limits.checkSequences('asample', baseModel, [{ what: 'the prompt', tokens: prompt }]);
    return this.ctx.idempotency.run('asample', key, async () => {
      this.ctx.admitWork();
      const work = (async () => {
        const client = await samplerClient();
        const { sequences, promptLogprobs } = await this.ctx.lane.run(async () => ({
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
        this.ctx.protobufResults.set(res, 'sample');
        return res;
      })();
      return { request_id: this.ctx.futures.create(work) };
    });
  }

  /**
   * The sampler of an asample that names its weights by model_path (no create_sampling_session round trip):
   * checked now (400/404 before any work), opened once per path and kept for the next requests, the 32 most recent.
   */
  private samplerForPath(modelPath: string): () => Promise<SamplingClient> {
    if (parseTinkerPath(modelPath)?.kind !== 'sampler_weights') throw apiError(400, `asample: '${modelPath}' is not a tinker://<run>/sampler_weights/<name> path`);
    const entry = this.ctx.paths.get(modelPath);
    if (!entry) throw apiError(404, `asample: no sampler weights at '${modelPath}'`);
    return () => {
      let opened = this.samplersByPath.get(modelPath);
      if (opened) {
        this.samplersByPath.delete(modelPath);
      } else {
        opened = this.ctx.backend.createSamplingClient(entry.backendPath).catch((err: unknown) => {
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
}
