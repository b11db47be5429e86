// What a running pipeline service holds, built once by bootstrapService (its stage deps and health probes are built from it).
import type { PolicyBackend } from '@rx/backend';
import type { StageName } from '@rx/contracts';
import type { RxMetrics } from '@rx/metrics';
import type { Logger } from 'pino';
import type { PipelineService, RendererResolver } from '@rx/pipeline';
import type { QueueRepository, RedisConnectionFactory } from '@rx/queue';
import type { ServiceConfig } from './service-config';

export interface ServiceRuntime {
  readonly service: PipelineService;
  readonly config: ServiceConfig;
  readonly connections: RedisConnectionFactory;
  readonly queues: QueueRepository;
  /** the backend, instrumented (latency and errors on /metrics) */
  readonly backend: PolicyBackend;
  readonly metrics: RxMetrics;
  readonly renderers: RendererResolver;
  /** per-stage time limits overriding the graph's */
  readonly stageTimeoutMs: Partial<Record<StageName, number>>;
  /** the process's pino logger (secrets redacted by path) */
  readonly logger: Logger;
  /** one JSON line on stdout: {level, time, service, event, ...fields} */
  log(event: string, fields?: Record<string, unknown>): void;
}
