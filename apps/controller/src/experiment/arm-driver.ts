// Drives one arm through the services: step N is requested on `step-requests` only after step N - 1's
// step-complete event arrived (steps of an arm are strictly ordered), and each completed step's record is
// appended to the arm's steps.jsonl before the next is requested (a resumed run reads it back).
import type { StepRecord } from '@rx/contracts';
import { stepMetricsOf } from '@rx/metrics';
import type { LoggedBatch } from '@rx/gates';
import type { ArmSpec } from '@rx/spec';
import { throwIfAborted, type ExperimentContext } from './experiment-context';
import { stepRequestFor } from '@rx/step-schedule';
import { appendStepLogs } from './step-logs';

export interface DriveArmOptions {
  arm: ArmSpec;
  /** the run id the services see (one per pilot, one per training attempt) */
  runId: string;
  fromStep: number;
  /** exclusive */
  toStep: number;
  bandwidth: number;
  initStatePath: string;
  stepsFile: string;
  /** shown on the arm's progress line */
  label: string;
  /** an absolute time after which no further step is requested (the calibration's cap) */
  deadline?: number;
  /** called after each step is written */
  onStep?: (record: StepRecord) => void;
}

export class DeadlineExceeded extends Error {
  override readonly name = 'DeadlineExceeded';
}

export async function driveArm(ctx: ExperimentContext, o: DriveArmOptions): Promise<StepRecord[]> {
  const records: StepRecord[] = [];
  const started = Date.now();
  for (let step = o.fromStep; step < o.toStep; step++) {
    throwIfAborted(ctx.signal);
    if (o.deadline !== undefined && Date.now() > o.deadline) throw new DeadlineExceeded(`${o.label} of ${o.arm.name} passed its wall-time cap before step ${step}`);
    // the next step is estimated at the mean of this drive's steps so far (0 before the first)
    const done = step - o.fromStep;
    ctx.budget?.check(`${o.label} step ${step + 1} of ${o.arm.name}`, done === 0 ? 0 : (Date.now() - started) / 1000 / done, o.label === 'train' ? 'training' : 'pilot', ctx.budget.stepTokens(o.arm.name));
    const req = stepRequestFor({ spec: ctx.spec, arm: o.arm, runId: o.runId, step, train: ctx.data.train, bandwidth: o.bandwidth, initStatePath: o.initStatePath });
    await ctx.bus.request(req);
    const event = await ctx.bus.waitFor(o.runId, o.arm.name, step, ctx.stepStallTimeoutMs);
    const record = event.record;
    ctx.dir.appendLine(o.stepsFile, record);
    appendStepLogs(ctx, o.stepsFile, record, o.toStep);
    records.push(record);
    o.onStep?.(record);
    const perStep = (Date.now() - started) / 1000 / (done + 1);
    ctx.metrics.recordStep(o.arm.name, stepMetricsOf(record));
    ctx.metrics.stepCommitted(o.arm.name);
    ctx.progress.arm(o.arm.name, {
      phase: o.label,
      step: step + 1,
      steps: o.toStep,
      reward: record.gate.rewardMean,
      gates: gateDisplay(record),
      etaSeconds: perStep * (o.toStep - step - 1),
      ...(ctx.budget ? { note: ctx.budget.line() } : {}),
    });
  }
  return records;
}

function gateDisplay(r: StepRecord): Record<string, number> {
  return r.estimator === 'kernel_cross_prompt_baseline'
    ? { ess_p10: r.gate.effectiveNeighbors.p10, nonzero: r.gate.fracNonzeroAdvantage, fallback: r.gate.fallbackFraction }
    : { group: r.gate.executedGroupSize, nonzero: r.gate.fracNonzeroAdvantage };
}

/** What the gates read of a logged step. */
export function loggedBatch(r: StepRecord): LoggedBatch {
  return {
    arm: r.arm,
    step: r.step,
    rollouts: r.rollouts.map((x) => ({ promptId: x.promptId, reward: x.reward, advantage: x.advantage, baseline: x.baseline, effectiveNeighbors: x.effectiveNeighbors })),
  };
}
