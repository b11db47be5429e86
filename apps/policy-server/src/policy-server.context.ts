// What every group of Tinker routes shares: the configuration, the backend, the futures and their results, the
// idempotency cache, the tinker:// path index, the model limits, the compute lane and the server's metrics.
// Plain resources and the checks all routes make; the routes themselves live in sessions, training models,
// training operations, samplers, futures and checkpoints (*.service.ts).
import { Inject, Injectable, type OnModuleDestroy } from '@nestjs/common';
import type { PolicyBackend } from '@rx/backend';
import { apiError } from './api-error';
import { ComputeLane } from './compute-lane';
import type { PolicyServerConfig } from './config';
import { FutureStore, ResultBudgetError } from './futures.store';
import { LogprobNoise } from './hosted-like.noise';
import { IdempotencyCache } from './idempotency.cache';
import { ModelLimitChecks } from './model-limits';
import { PathIndex } from './path-index';
import { ServerMetrics } from './server-metrics';
import { POLICY_BACKEND, POLICY_SERVER_CONFIG } from './tokens';

/** The result kinds retrieve_future may answer as protobuf (SampleResponse, ForwardBackwardOutput). */
export type ProtobufResultKind = 'sample' | 'forward_backward';

@Injectable()
export class PolicyServerContext implements OnModuleDestroy {
  readonly futures: FutureStore;
  readonly metrics: ServerMetrics;
  readonly idempotency: IdempotencyCache;
  readonly paths: PathIndex;
  readonly limits: ModelLimitChecks;
  /** results that have a protobuf form */
  readonly protobufResults = new WeakMap<object, ProtobufResultKind>();
  /** hosted-like logprob noise on forward_backward (null: exact) */
  readonly noise: LogprobNoise | null;
  /** the model's compute, one request at a time with the event loop turning between them (compute-lane.ts) */
  readonly lane = new ComputeLane();

  constructor(
    @Inject(POLICY_SERVER_CONFIG) readonly config: PolicyServerConfig,
    @Inject(POLICY_BACKEND) readonly backend: PolicyBackend,
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
    this.futures.close();
    this.metrics.stop();
  }

  /** New work is refused (429) while too many results, or too many bytes of them, wait to be fetched. */
  admitWork(): void {
    try {
      this.futures.admit();
    } catch (err) {
      if (err instanceof ResultBudgetError) throw apiError(429, err.message);
      throw err;
    }
  }

  /** One request's tokens stay within RX_POLICY_MAX_TOKENS_PER_REQUEST (400 beyond). */
  checkTokens(endpoint: string, tokens: number): void {
    const limit = this.config.maxTokensPerRequest;
    if (tokens > limit) {
      throw apiError(400, `${endpoint}: ${tokens} tokens in one request; this server takes at most ${limit} (RX_POLICY_MAX_TOKENS_PER_REQUEST)`);
    }
  }
}
