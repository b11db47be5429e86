// What the trainer does with a `train-steps` job: apply the step exactly once on the arm's lineage (the ledger:
// optim_step, saveState, commit naming the state), log it, and emit step-complete on `step-events`. A step left
// in doubt by a dead attempt is taken over and redone from the state committed with the step before. A replay
// of a committed step logs (if its line is missing) and re-emits the same event under the same job id, so a
// crash between commit and emit loses nothing.
import { randomUUID } from 'node:crypto';
import { jobIdFor } from '@rx/contracts';
import { stepMetricsOf, type RxMetrics } from '@rx/metrics';
import { consumeJob, trainStep, type ConsumedJob, type QueueProducer, type StepLog, type TrainerStepLedger, type TrainingClientPool } from '@rx/pipeline';

export interface TrainJobDeps {
  queues: QueueProducer;
  metrics: RxMetrics;
  ledger: TrainerStepLedger;
  trainers: TrainingClientPool;
  stepLog: StepLog;
  timeoutMs?: number;
  /** one JSON line per notable event (a take-over of an in-doubt step) */
  log?: (event: string, fields: Record<string, unknown>) => void;
}

export interface TrainJobResult {
  outcome: 'applied' | 'skipped';
  step: number;
  loss: number | null;
  /** the in-doubt claim this delivery took over (its holder died or gave up mid-step), when it did */
  tookOver?: { token: string; phase: string; since: string };
}

export class TrainJobHandler {
  constructor(private readonly deps: TrainJobDeps) {}

  handle(job: ConsumedJob): Promise<TrainJobResult> {
    return consumeJob('train-steps', job, this.deps, async (payload) => {
      // the fencing token of this delivery: a second delivery of the same job never holds the same claim
      const attemptToken = `${job.id ?? 'job'}:${job.attemptsMade}:${randomUUID()}`;
      const out = await trainStep(payload, { ledger: this.deps.ledger, trainers: this.deps.trainers, attemptToken });
      const record = out.record;
      if (!record) return { outcome: out.outcome, step: payload.step, loss: null };
      const tookOver = out.outcome === 'applied' && out.tookOver ? { token: out.tookOver.token, phase: out.tookOver.phase, since: out.tookOver.since } : undefined;
      if (tookOver) this.deps.log?.('step-taken-over', { runId: record.runId, arm: record.arm, step: record.step, from: tookOver });
      await this.deps.stepLog.append(record);
      await this.deps.queues.enqueue(
        'step-events',
        { runId: record.runId, arm: record.arm, step: record.step, kind: 'step-complete', outcome: out.outcome, record },
        jobIdFor(record, 'complete'),
      );
      if (out.outcome === 'applied') {
        this.deps.metrics.stepCommitted(record.arm);
        this.deps.metrics.countRollouts('train', record.arm, record.rollouts.length);
        this.deps.metrics.recordStep(record.arm, stepMetricsOf(record));
      }
      return { outcome: out.outcome, step: record.step, loss: record.loss, ...(tookOver ? { tookOver } : {}) };
    });
  }
}
