// The grader: the graph's `grade` edge (rollouts -> graded-rollouts) on BullMQ, /health and /metrics.
// main.ts, the e2e tests and the controller start it with this.
import { gradeCompletion } from '@rx/grading';
import { bootstrapService, type RunningService, type ServiceStartOptions } from '@rx/service-host';
import { cachedRendererResolver } from '@rx/pipeline';
import type { GraderConfig } from './config';

export function startGrader(opts: ServiceStartOptions<GraderConfig>): Promise<RunningService> {
  return bootstrapService({
    ...opts,
    service: 'grader',
    renderers: opts.renderers ?? cachedRendererResolver({ tokenizerPath: opts.config.RX_TOKENIZER_PATH }),
    stageDeps: (runtime) => ({ renderers: runtime.renderers, grade: gradeCompletion }),
  });
}
