// The pipeline in one process, without Redis: the graph's edges run by the same edge runner as the services, on
// the in-memory transport (every payload parsed at both edges, as on BullMQ). The overhead benchmark runs a step
// this way and through the services, so it compares the same code over two transports.
import type { PolicyBackend } from '@rx/backend';
import { jobIdFor, QUEUE_CATALOG, stepCompleteOrThrow, type StepComplete, type StepRequest } from '@rx/contracts';
import { runEdge } from './edge-runner';
import { InMemoryTransport } from './in-memory-transport';
import { NO_STAGE_METRICS, PIPELINE_GRAPH, type EdgeOfService, type PipelineService, type StageDeps } from './pipeline-graph';
import type { RendererResolver } from './renderer-resolver';
import { InMemoryRolloutWindowStore, type RolloutWindowStore } from './rollout-window.store';
import type { GradeFn } from './stages/grade.stage';
import { InMemoryTrainerStepLedger, type TrainerStepLedger } from './trainer-step.ledger';
import { TrainingClientPool } from './training-client.pool';

export interface InProcessPipelineDeps {
  backend: PolicyBackend;
  renderers: RendererResolver;
  grade: GradeFn;
  concurrency: number;
  windows?: RolloutWindowStore;
  ledger?: TrainerStepLedger;
}

/** no metrics in process: the benchmark times the steps itself */
const NO_METRICS = { ...NO_STAGE_METRICS, countDeadLetter: () => undefined, observeStage: () => undefined, countJobAttempt: () => undefined };

export class InProcessPipeline {
  readonly windows: RolloutWindowStore;
  readonly ledger: TrainerStepLedger;
  private readonly stageDeps: Omit<StageDeps, 'controller'>;

  constructor(deps: InProcessPipelineDeps) {
    this.windows = deps.windows ?? new InMemoryRolloutWindowStore();
    this.ledger = deps.ledger ?? new InMemoryTrainerStepLedger();
    this.stageDeps = {
      trainer: { ledger: this.ledger, trainers: new TrainingClientPool(deps.backend, this.ledger) },
      sampler: { backend: deps.backend, renderers: deps.renderers, concurrency: deps.concurrency },
      grader: { renderers: deps.renderers, grade: deps.grade },
      advantage: { windows: this.windows },
    };
  }

  /** runs one step of one arm, edge after edge, to its step-complete event */
  async runStep(request: StepRequest): Promise<StepComplete> {
    const transport = new InMemoryTransport();
    await transport.enqueue('step-requests', request, jobIdFor(request, 'prepare'));
    for (const edge of PIPELINE_GRAPH) {
      if (edge.service === 'controller') continue;
      const job = transport.take(edge.consumes);
      if (!job) break; // nothing sent on: the step was committed already, or is being trained elsewhere
      const service = edge.service as Exclude<PipelineService, 'controller'>;
      await runEdge(edge as EdgeOfService<typeof service>, job, { queues: transport, deps: this.stageDeps[service] as never, metrics: NO_METRICS });
    }
    const job = transport.take('step-events');
    if (job) {
      return stepCompleteOrThrow(QUEUE_CATALOG['step-events'].schema.parse(job.data));
    }
    const record = await this.ledger.record(request, request.step);
    if (!record) throw new Error(`step ${request.step} of ${request.runId}/${request.arm} is in flight elsewhere`);
    return { runId: request.runId, arm: request.arm, step: request.step, kind: 'step-complete', outcome: 'skipped', record };
  }
}
