// Phase 4, the activation pilot: 2 treatment steps and 1 baseline step at the pre-registered bandwidth, through
// the services, from the shared initial state; the held-out 8-sample mean reward of the 64 pilot prompts (the
// treatment's first-step prompts, sampled from the shared initial weights); the six gate metrics from the
// logged batches, evaluated against the spec's bounds (never relaxed).
// If only kernel_effective_neighbors_p10 fails, the single pre-registered calibration runs: the next bandwidth
// of {0.5, 1.0}, chosen by the gate on pilot training prompts only, at most 2 pilot steps and 10 wall minutes.
// The failed pilot's logs are kept beside it (pilot_bw0.5_FAILED_ess/). Still failing: the run stops here.
import type { StepRecord } from '@rx/contracts';
import { evaluateGates, formatGateReport, gateMetrics, type GateReport, type HeldoutPromptRewards } from '@rx/gates';
import { gradeCompletion } from '@rx/grading';
import { gradeBatch, sampleBatch } from '@rx/pipeline';
import { baselineArm, kernelSettings, pilotSettings, treatmentArm } from '@rx/spec';
import { DeadlineExceeded, driveArm, loggedBatch } from '../experiment/arm-driver';
import { RunStopped, type ExperimentContext } from '../experiment/experiment-context';
import { promptsForStep, stepPlanFor } from '@rx/step-schedule';
import { formatBandwidth, writeRunFile, type PilotReport, type PilotResult, type SharedInitResult } from '@rx/run-dir';

/** sampling seed of the held-out draws (far from every training step's seeds) */
export const HELDOUT_SEED = 1_000_000_000;
/** the gate whose failure alone triggers the calibration, and the suffix of the kept logs */
const ESS_GATE = 'kernel_effective_neighbors_p10';
const ESS_SUFFIX = 'ess';

interface PilotInputs {
  bandwidth: number;
  attempt: number;
  init: SharedInitResult;
  includeBaseline: boolean;
  reuse?: { baseline: StepRecord[]; heldout: HeldoutPromptRewards[]; fromDir: string };
  deadline?: number;
}

async function sampleHeldout(ctx: ExperimentContext, init: SharedInitResult, runId: string): Promise<HeldoutPromptRewards[]> {
  const settings = pilotSettings(ctx.spec);
  const arm = treatmentArm(ctx.spec);
  const prompts = promptsForStep(ctx.data.train, arm, 0).slice(0, settings.heldoutPrompts);
  const base = stepPlanFor(ctx.spec, arm, 0, kernelSettings(ctx.spec).bandwidth);
  const plan = { ...base, groupSize: settings.heldoutSamplesPerPrompt, sampling: { ...base.sampling, seed: HELDOUT_SEED } };
  const sampled = await sampleBatch({ runId: `${runId}.heldout`, arm: arm.name, step: 0, plan, samplerPath: init.sampler_path, prompts }, { backend: ctx.backend, renderer: ctx.renderer, concurrency: ctx.concurrency });
  const graded = gradeBatch(sampled, { renderer: ctx.renderer, grade: gradeCompletion });
  const byPrompt = new Map<string, number[]>();
  for (const r of graded.rollouts) byPrompt.set(r.promptId, [...(byPrompt.get(r.promptId) ?? []), r.reward]);
  return prompts.map((p) => ({ promptId: p.promptId, rewards: byPrompt.get(p.promptId) ?? [] }));
}

async function runOnePilot(ctx: ExperimentContext, i: PilotInputs): Promise<{ report: PilotReport; treatment: StepRecord[]; baseline: StepRecord[]; heldout: HeldoutPromptRewards[] }> {
  const started = Date.now();
  const settings = pilotSettings(ctx.spec);
  const dir = ctx.dir.pilotDir(i.bandwidth);
  ctx.dir.remove(dir); // an interrupted pilot starts over under a new run id
  const runId = `${ctx.manifest.runId}.p${i.attempt}-bw${formatBandwidth(i.bandwidth)}`;
  const t = treatmentArm(ctx.spec);
  const b = baselineArm(ctx.spec);
  ctx.progress.info(`pilot at bandwidth ${formatBandwidth(i.bandwidth)}: ${settings.steps} ${t.name} steps${i.includeBaseline ? ` and 1 ${b.name} step` : ''} (run ${runId})`);

  const treatmentP = driveArm(ctx, {
    arm: t,
    runId,
    fromStep: 0,
    toStep: settings.steps,
    bandwidth: i.bandwidth,
    initStatePath: i.init.state_path,
    stepsFile: ctx.dir.pilotStepsFile(dir, t.name),
    label: `pilot ${formatBandwidth(i.bandwidth)}`,
    deadline: i.deadline,
  });
  const baselineP = i.includeBaseline
    ? driveArm(ctx, {
        arm: b,
        runId,
        fromStep: 0,
        toStep: 1,
        bandwidth: i.bandwidth,
        initStatePath: i.init.state_path,
        stepsFile: ctx.dir.pilotStepsFile(dir, b.name),
        label: 'pilot',
        deadline: i.deadline,
      })
    : Promise.resolve(i.reuse?.baseline ?? []);
  const heldoutP = i.reuse ? Promise.resolve(i.reuse.heldout) : sampleHeldout(ctx, i.init, runId);
  const [treatment, baseline, heldout] = await Promise.all([treatmentP, baselineP, heldoutP]);
  if (!i.reuse) ctx.dir.writeLines(ctx.dir.heldoutFile(dir), heldout);

  const metrics = gateMetrics({ batches: [...treatment, ...baseline].map(loggedBatch), treatmentArm: t.name, baselineArm: b.name, heldout, pilotSteps: settings.steps });
  const report = evaluateGates(ctx.spec, metrics);
  const pilotReport: PilotReport = {
    bandwidth: i.bandwidth,
    run_id: runId,
    dir: ctx.dir.relative(dir),
    treatment_steps: treatment.length,
    baseline_steps: i.includeBaseline ? baseline.length : 0,
    baseline_from: i.reuse ? i.reuse.fromDir : ctx.dir.relative(dir),
    heldout_from: i.reuse ? i.reuse.fromDir : ctx.dir.relative(dir),
    metrics,
    report,
    lines: formatGateReport(report),
    wall_seconds: (Date.now() - started) / 1000,
  };
  writeRunFile(ctx.dir, '<pilot>/gate-report.json', pilotReport, ctx.dir.gateReportFile(dir));
  for (const line of pilotReport.lines) ctx.progress.info(`  ${line}`);
  for (const g of report.results) {
    ctx.metrics.setGate({ run: ctx.manifest.runId, arm: t.name, gate: g.metric }, gateValue(g.value), g.pass);
    if (g.bound.min !== undefined) ctx.metrics.setGateBound(g.metric, 'min', g.bound.min);
    if (g.bound.max !== undefined) ctx.metrics.setGateBound(g.metric, 'max', g.bound.max);
    if (g.bound.one_of !== undefined) ctx.metrics.setGateAllowedValues(g.metric, g.bound.one_of);
  }
  return { report: pilotReport, treatment, baseline, heldout };
}

function gateValue(v: number | number[] | null): number {
  if (v === null) return NaN;
  return Array.isArray(v) ? (v.length === 1 ? v[0] : NaN) : v;
}

const num = (x: number): string => (Number.isInteger(x) ? String(x) : x.toPrecision(4));

/** `pilot_mean_reward = -0.06875 (needs in [0.1, 0.9], short by 0.1688); ...` */
function failureText(r: PilotReport): string {
  return r.report.results
    .filter((g) => !g.pass)
    .map((g) => {
      const v = g.value === null ? 'no value' : Array.isArray(g.value) ? `{${g.value.join(', ')}}` : num(g.value);
      return `${g.metric} = ${v} (needs ${g.boundText}${g.failedBy !== null ? `, short by ${num(g.failedBy)}` : ''})`;
    })
    .join('; ');
}

export async function runPilot(ctx: ExperimentContext, init: SharedInitResult): Promise<PilotResult> {
  const kernel = kernelSettings(ctx.spec);
  const settings = pilotSettings(ctx.spec);
  const preRegistered = kernel.bandwidth;
  const attempt = ctx.state.state.pilotAttempt + 1;
  ctx.state.update((s) => void (s.pilotAttempt = attempt));
  for (const bw of kernel.calibrationBandwidths) {
    ctx.dir.remove(ctx.dir.pilotDir(bw));
    ctx.dir.remove(ctx.dir.failedPilotDir(bw, ESS_SUFFIX));
  }

  const first = await runOnePilot(ctx, { bandwidth: preRegistered, attempt, init, includeBaseline: true });
  const result: PilotResult = {
    pre_registered_bandwidth: preRegistered,
    chosen_bandwidth: null,
    pass: false,
    pilots: [first.report],
    calibration: null,
    failed_logs: [],
    stop_reason: null,
  };
  const failed = first.report.report.failed;
  if (first.report.report.pass) {
    result.chosen_bandwidth = preRegistered;
    result.pass = true;
  } else if (failed.length === 1 && failed[0] === ESS_GATE) {
    // keep the failed pilot's logs, then the one pre-registered calibration
    const keptDir = ctx.dir.failedPilotDir(preRegistered, ESS_SUFFIX);
    ctx.dir.move(ctx.dir.pilotDir(preRegistered), keptDir);
    first.report.dir = ctx.dir.relative(keptDir);
    first.report.baseline_from = first.report.dir;
    first.report.heldout_from = first.report.dir;
    writeRunFile(ctx.dir, '<pilot>/gate-report.json', first.report, ctx.dir.gateReportFile(ctx.dir.path(first.report.dir)));
    result.failed_logs.push(first.report.dir);
    const candidates = kernel.calibrationBandwidths.filter((h) => h !== preRegistered);
    const calStarted = Date.now();
    const deadline = calStarted + settings.maxWallMinutes * 60_000;
    ctx.progress.info(`only ${ESS_GATE} failed at ${formatBandwidth(preRegistered)}: the pre-registered calibration tries bandwidth ${candidates.map(formatBandwidth).join(', ')} (cap ${settings.steps} pilot steps, ${settings.maxWallMinutes} wall minutes)`);
    result.calibration = { ran: true, reason: `${ESS_GATE} failed at bandwidth ${formatBandwidth(preRegistered)}: ${failureText(first.report)}`, candidates, cap_steps: settings.steps, cap_minutes: settings.maxWallMinutes, wall_seconds: 0 };
    for (const h of candidates) {
      try {
        const next = await runOnePilot(ctx, { bandwidth: h, attempt, init, includeBaseline: false, reuse: { baseline: first.baseline, heldout: first.heldout, fromDir: first.report.dir }, deadline });
        result.pilots.push(next.report);
        if (next.report.report.pass) {
          result.chosen_bandwidth = h;
          result.pass = true;
          break;
        }
      } catch (err) {
        if (!(err instanceof DeadlineExceeded)) throw err;
        result.stop_reason = `the calibration passed its cap of ${settings.maxWallMinutes} wall minutes: ${err.message}`;
        break;
      }
      if (Date.now() > deadline) {
        result.stop_reason = `the calibration passed its cap of ${settings.maxWallMinutes} wall minutes`;
        break;
      }
    }
    result.calibration.wall_seconds = (Date.now() - calStarted) / 1000;
  }
  if (!result.pass && result.stop_reason === null) {
    const last = result.pilots[result.pilots.length - 1];
    result.stop_reason = `activation gate failed at bandwidth ${formatBandwidth(last.bandwidth)}: ${failureText(last)}`;
  }
  writeRunFile(ctx.dir, 'pilot.json', result);
  if (!result.pass) throw new RunStopped(`${result.stop_reason}; no arm was trained`, 'pilot');
  ctx.progress.info(`activation gate passed at bandwidth ${formatBandwidth(result.chosen_bandwidth as number)}`);
  return result;
}
