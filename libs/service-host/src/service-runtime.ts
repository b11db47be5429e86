// What a running pipeline service holds, built once by bootstrapService and provided to Nest as RX_RUNTIME.
import type { PolicyBackend } from '@rx/backend';
import type { StageName } from '@rx/contracts';
import type { RxMetrics } from '@rx/metrics';
import type { Logger } from 'pino';
import type { PipelineService } from '@rx/pipeline';
import type { QueueRepository } from '@rx/queue';
import type { RedisConnectionFactory } from '@rx/queue';
import type { RendererResolver } from '@rx/pipeline';
import type { ServiceConfig } from './service-config';

export const RX_RUNTIME = 'RX_RUNTIME';

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
