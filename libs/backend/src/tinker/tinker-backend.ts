// TinkerBackend: the PolicyBackend of real runs, a client of the Tinker HTTP API as the Python SDK 0.25 speaks
// it (protobuf forward_backward and results, sampling sessions, JWT, its retries; docs/tinker.md). The same
// client drives apps/policy-server.
import type { LoraConfig, PolicyBackend, SamplingClient, TrainingClient } from '../policy-backend';
import { parseTinkerEnv } from './tinker-config';
import { DEFAULT_TINKER_TIMING, TinkerCore, type TinkerLogger, type TinkerTiming } from './tinker-core';
import { fetchCheckpointAdapter, fetchWeightsInfo, type CheckpointAdapter } from './tinker-checkpoints';
import { TinkerApiError, TinkerClosedError, TinkerError, TinkerRequestFailedError, TinkerSessionLostError } from './tinker-errors';
import { TinkerHttp, type TinkerRetryEvent } from './tinker-http';
import { DEFAULT_RETRY_POLICY } from './tinker-retry';
import { TinkerSamplingClient } from './tinker-sampling-client';
import { TinkerTrainingClient } from './tinker-training-client';
import {
  TINKER_API_PREFIX,
  TINKER_WIRE_SDK_VERSION,
  createModelResponseSchema,
  createSamplingSessionResponseSchema,
  healthResponseSchema,
  type WeightsInfo,
} from './tinker-wire.schema';

export interface TinkerBackendOptions {
  /** e.g. https://tinker.thinkingmachines.dev/services/tinker-prod; `/api/v1/...` is appended */
  baseUrl: string;
  apiKey: string;
  /** per-request timeout (default 60 s) */
  timeoutMs?: number;
  /** HTTP-level retries after the first attempt on 5xx/408/409/429/connection loss/timeouts (default 10, as the SDK) */
  retries?: number;
  /** first back-off delay (default 500 ms), doubled per retry up to retryMaxDelayMs (default 10 s), with jitter */
  retryBaseDelayMs?: number;
  retryMaxDelayMs?: number;
  /** timeout of one retrieve_future long-poll (default 45 s; the server holds a poll about 30 s) */
  pollTimeoutMs?: number;
  /** how long to wait for one future's result in all (default: the stuck timeout, 120 min) */
  futureTimeoutMs?: number;
  /** session heartbeat period (default 10 s) */
  heartbeatIntervalMs?: number;
  /** session tags (TINKER_TAGS in the SDK) */
  tags?: string[];
  /** the SDK's application-level retry, billing-pause, poll back-off and JWT timings (tests scale them down) */
  timing?: Partial<TinkerTiming>;
  /** called before each retry (for logs and tests) */
  onRetry?: (event: TinkerRetryEvent) => void;
  logger?: TinkerLogger;
}

const stderrLogger: TinkerLogger = { warn: (m) => process.stderr.write(`tinker: ${m}\n`) };

/** A refusal of the request itself (not an outage, not a lost session): a 4xx, or a failed future of category 'user'. */
function isRefusal(err: unknown): err is TinkerError {
  if (err instanceof TinkerSessionLostError) return false;
  if (err instanceof TinkerApiError) return err.status >= 400 && err.status < 500 && err.status !== 408 && err.status !== 429;
  return err instanceof TinkerRequestFailedError && err.category === 'user';
}

export class TinkerBackend implements PolicyBackend {
  readonly kind = 'tinker' as const;
  private readonly core: TinkerCore;
  private readonly logger: TinkerLogger;
  /** the service refused a per-model seed: why (clients are created without one from then on) */
  private seedRefusal: string | null = null;

  /** Reads TINKER_BASE_URL (default: the production service) and TINKER_API_KEY; throws TinkerConfigError. */
  static fromEnv(env: Record<string, string | undefined> = process.env, options: Omit<TinkerBackendOptions, 'baseUrl' | 'apiKey'> = {}): TinkerBackend {
    const parsed = parseTinkerEnv(env);
    return new TinkerBackend({ ...options, baseUrl: parsed.TINKER_BASE_URL, apiKey: parsed.TINKER_API_KEY });
  }

  constructor(options: TinkerBackendOptions) {
    if (!/^https?:\/\//.test(options.baseUrl)) throw new TinkerError(`TinkerBackend: baseUrl must be an http(s) URL (got '${options.baseUrl}')`);
    if (!options.apiKey) throw new TinkerError('TinkerBackend: apiKey is empty');
    const http = new TinkerHttp({
      baseUrl: options.baseUrl,
      apiKey: options.apiKey,
      timeoutMs: options.timeoutMs ?? 60_000,
      retry: {
        retries: options.retries ?? DEFAULT_RETRY_POLICY.retries,
        baseDelayMs: options.retryBaseDelayMs ?? DEFAULT_RETRY_POLICY.baseDelayMs,
        maxDelayMs: options.retryMaxDelayMs ?? DEFAULT_RETRY_POLICY.maxDelayMs,
      },
      userAgent: `rx-tinker-ts/0.2.0 (tinker wire of SDK ${TINKER_WIRE_SDK_VERSION})`,
      onRetry: options.onRetry,
    });
    this.logger = options.logger ?? stderrLogger;
    this.core = new TinkerCore(http, {
      pollTimeoutMs: options.pollTimeoutMs ?? 45_000,
      futureTimeoutMs: options.futureTimeoutMs ?? DEFAULT_TINKER_TIMING.stuckTimeoutMs,
      heartbeatIntervalMs: options.heartbeatIntervalMs ?? 10_000,
      tags: options.tags ?? [],
      logger: options.logger ?? stderrLogger,
      timing: { ...DEFAULT_TINKER_TIMING, ...options.timing },
    });
  }

  get baseUrl(): string {
    return this.core.http.baseUrl;
  }

  /** JWTs fetched from auth/token so far (0 when the server does not ask for them) */
  get jwtsFetched(): number {
    return this.core.jwtsFetched;
  }

  /**
   * create_model with the config's seed. A service that refuses it (a 4xx, or a failed future of category 'user')
   * gets the same request once more without the seed: when that is served, the seed was the cause, the client says
   * so (`seedRefused`) and this backend sends no seed from then on; when it is refused too, the first refusal is thrown.
   */
  async createLoraTrainingClient(config: LoraConfig): Promise<TrainingClient> {
    this.assertOpen('createLoraTrainingClient');
    if (!Number.isInteger(config.rank) || config.rank < 1) throw new TinkerError(`createLoraTrainingClient: rank must be a positive integer (got ${config.rank})`);
    return this.inLiveSession('create_model', () => this.createTrainingClient(config));
  }

  /**
   * `create` once more on a new session when the server has forgotten this backend's session (TinkerSessionLostError:
   * the core has dropped it, so the next call opens a new one): a client made now belongs to the new session. Clients
   * made before the loss stay lost (their model or sampler lived in the old session).
   */
  private async inLiveSession<T>(what: string, create: () => Promise<T>): Promise<T> {
    try {
      return await create();
    } catch (err) {
      if (!(err instanceof TinkerSessionLostError)) throw err;
      this.logger.warn(`${what}: the server no longer knows this session (${err.message.split('\n')[0]}); opening a new session`);
      return create();
    }
  }

  private async createTrainingClient(config: LoraConfig): Promise<TrainingClient> {
    if (this.seedRefusal !== null) return new TinkerTrainingClient(this.core, await this.createModel(config, false), this.seedRefusal);
    try {
      return new TinkerTrainingClient(this.core, await this.createModel(config, true));
    } catch (err) {
      if (!isRefusal(err)) throw err;
      let modelId: string;
      try {
        modelId = await this.createModel(config, false);
      } catch {
        throw err;
      }
      this.seedRefusal = `create_model refused lora_config.seed ${config.seed} (${err.message}); the model was created once more without a seed, which the service then accepted`;
      this.logger.warn(this.seedRefusal);
      return new TinkerTrainingClient(this.core, modelId, this.seedRefusal);
    }
  }

  private async createModel(config: LoraConfig, withSeed: boolean): Promise<string> {
    const session = await this.core.ensureSession();
    const res = await this.core.submitAndAwait(
      'create_model',
      {
        session_id: session.sessionId,
        model_seq_id: this.core.nextModelSeqId(),
        base_model: config.baseModel,
        lora_config: { rank: config.rank, ...(withSeed ? { seed: config.seed } : {}), train_unembed: true, train_mlp: true, train_attn: true },
        type: 'create_model',
      },
      'CreateModel',
      createModelResponseSchema,
    );
    return res.model_id;
  }

  /** The archive of a checkpoint (GET …/archive, then its URL) and its adapter's sha256; CheckpointBytesUnavailableError when the service gives none. */
  async checkpointAdapter(tinkerPath: string): Promise<CheckpointAdapter> {
    this.assertOpen('checkpointAdapter');
    return fetchCheckpointAdapter(this.core, tinkerPath);
  }

  /** POST weights_info: the service's own account of a checkpoint (base model, LoRA rank). */
  async weightsInfo(tinkerPath: string): Promise<WeightsInfo> {
    this.assertOpen('weightsInfo');
    return fetchWeightsInfo(this.core, tinkerPath);
  }

  async createSamplingClient(modelPath: string): Promise<TinkerSamplingClient> {
    this.assertOpen('createSamplingClient');
    if (!modelPath.startsWith('tinker://')) {
      throw new TinkerError(`createSamplingClient: expected a tinker:// path from saveWeightsForSampler (got '${modelPath}')`);
    }
    return this.inLiveSession('create_sampling_session', async () => {
      // as the SDK since 0.3: one sampling session per sampler, numbered within the session
      const session = await this.core.ensureSession();
      const body = { session_id: session.sessionId, sampling_session_seq_id: this.core.nextSamplingSessionSeqId(), model_path: modelPath, type: 'create_sampling_session' };
      const created = await this.core.withRetries('create_sampling_session', () => this.core.post('create_sampling_session', body, createSamplingSessionResponseSchema));
      return new TinkerSamplingClient(this.core, modelPath, created.sampling_session_id);
    });
  }

  /** GET /api/v1/healthz once (no retries, 5 s at most). */
  async ping(): Promise<boolean> {
    if (this.core.http.closed) return false;
    try {
      const res = await this.core.http.request({ method: 'GET', path: `${TINKER_API_PREFIX}/healthz`, retries: 0, timeoutMs: 5_000 });
      return healthResponseSchema.safeParse(res.body).success && (res.body as { status: string }).status === 'ok';
    } catch {
      return false;
    }
  }

  /** Stops the heartbeat and aborts calls in flight; the backend cannot be used afterwards. */
  async close(): Promise<void> {
    this.core.close();
  }

  private assertOpen(what: string): void {
    if (this.core.http.closed) throw new TinkerClosedError(`TinkerBackend.${what}: the backend is closed`);
  }
}
