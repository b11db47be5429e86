// What a running pipeline service holds, built once by bootstrapService (its stage deps and health probes are built from it).
import type { PolicyBackend } from '@rx/backend';
import type { StageName } from '@rx/contracts';
import type { RxMetrics } from '@rx/metrics';
import type { Logger } from 'pino';
import type { PipelineService } from '@rx/pipeline';
import type { QueueRepository, RedisConnectionFactory } from '@rx/queue';
import type { ServiceConfig } from './service-config';

export interface ServiceRuntime {
  readonly service: PipelineService;
  readonly config: ServiceConfig;
  readonly connections: RedisConnectionFactory;
  readonly queues: QueueRepository;
  /** the backend, instrumented (latency and errors on /metrics); null for a service that never calls it (grader, advantage) */
  readonly backend: PolicyBackend | null;
  readonly metrics: RxMetrics;
  /** per-stage time limits overriding the graph's */
  readonly stageTimeoutMs: Partial<Record<StageName, number>>;
  /** the process's pino logger (secrets redacted by path) */
  readonly logger: Logger;
  /** one JSON line on stdout: {level, time, service, event, ...fields} */
  log(event: string, fields?: Record<string, unknown>): void;
}

/** the backend of a service that calls the model (the sampler, the trainer: they are started with one) */
export function backendOf(runtime: ServiceRuntime): PolicyBackend {
  if (!runtime.backend) throw new Error(`${runtime.service} was started without a backend, and its stages call one`);
  return runtime.backend;
}
