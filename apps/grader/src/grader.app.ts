// The grader: the graph's `grade` edge (rollouts -> graded-rollouts) on BullMQ, /health and /metrics. It never
// calls the backend. main.ts, the e2e tests and the controller start it with this.
import { gradeCompletion } from '@rx/grading';
import { bootstrapService, type RunningService, type ServiceStartOptions } from '@rx/service-host';
import { cachedRendererResolver, type RendererResolver } from '@rx/pipeline';
import type { GraderConfig } from './config';

export function startGrader(opts: ServiceStartOptions<GraderConfig> & { renderers?: RendererResolver }): Promise<RunningService> {
  const renderers = opts.renderers ?? cachedRendererResolver({ tokenizerPath: opts.config.RX_TOKENIZER_PATH });
  return bootstrapService({
    ...opts,
    service: 'grader',
    stageDeps: () => ({ renderers, grade: gradeCompletion }),
  });
}
