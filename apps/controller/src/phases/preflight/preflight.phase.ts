// Phase 2, the correctness preflight: (a) the estimator checks, (b) the baseline path against the stock path and
// the float64 reference, (c) the probe of each arm. No training happens while any of them fails.
import { correctnessPreflight, kernelSettings, preflightTolerances, type CorrectnessPreflightState } from '@rx/spec';
import { RunStopped, type ExperimentContext } from '../../experiment/experiment-context';
import { runBaselinePathCheck, type BaselinePathCheck } from './baseline-path.check';
import { runEstimatorChecks, type EstimatorChecks } from './estimator-checks';
import { runProbe, type ProbeResult } from './probe';

export interface PreflightResult {
  pass: boolean;
  /** a: forced activation and non-activation of the kernel estimator */
  estimator_checks: EstimatorChecks;
  /** b: one entry per correctness_preflight path of the spec */
  baseline_path: BaselinePathCheck[];
  /** c: one probe per arm */
  probe: ProbeResult[];
  /** what the spec itself says of its correctness preflight (unresolved revisions are reported, see the record) */
  spec_state: CorrectnessPreflightState;
  /** what this run checked against in place of the spec's unresolved revisions */
  resolved_by_run: { baseline: string; reference: string };
  failures: string[];
}

export async function runPreflight(ctx: ExperimentContext): Promise<PreflightResult> {
  const { spec } = ctx;
  ctx.progress.info('preflight (a): kernel estimator, forced activation and non-activation');
  const estimator_checks = await runEstimatorChecks(kernelSettings(spec).bandwidth);
  ctx.progress.info('preflight (b): baseline path on the fixed GRPO batch vs the stock path and the float64 reference');
  const baseline_path = await Promise.all(preflightTolerances(spec).map((t) => runBaselinePathCheck(t)));
  ctx.progress.info('preflight (c): probe, one forward_backward + optim_step per arm');
  const probe: ProbeResult[] = [];
  for (const arm of spec.arms) {
    probe.push(
      await runProbe({ spec, arm, backend: ctx.backend, renderer: ctx.renderer, train: ctx.data.train, runId: ctx.manifest.runId, bandwidth: kernelSettings(spec).bandwidth, concurrency: ctx.concurrency }),
    );
  }

  const failures: string[] = [];
  if (!estimator_checks.forced_activation.pass) failures.push(`(a) forced activation: ${estimator_checks.forced_activation.detail}`);
  if (!estimator_checks.forced_non_activation.pass) failures.push(`(a) forced non-activation: ${estimator_checks.forced_non_activation.detail}`);
  for (const b of baseline_path) {
    if (b.advantages_max_abs_error > 1e-12) failures.push(`(b) ${b.path_id}: advantages differ from the stock path by ${b.advantages_max_abs_error}`);
    if (!b.datums_equal) failures.push(`(b) ${b.path_id}: ${b.datums_detail}`);
    for (const k of ['baseline_loss', 'baseline_gradient', 'reference_loss', 'reference_gradient'] as const) {
      if (!b[k].pass) failures.push(`(b) ${b.path_id} ${k}: ${b[k].failures.join('; ')}`);
    }
  }
  for (const p of probe) if (!p.pass) failures.push(`(c) probe ${p.arm}: ${p.error ?? 'failed'}`);

  const result: PreflightResult = {
    pass: failures.length === 0,
    estimator_checks,
    baseline_path,
    probe,
    spec_state: correctnessPreflight(spec),
    resolved_by_run: {
      baseline:
        'stock group-mean path: tinker-cookbook compute_advantages and datum layout (rl/data_processing.py, read at 11885f569f96d40186659802b0f8c938938bc564), ' +
        're-stated in apps/controller/src/phases/preflight/stock-datum.reference.ts',
      reference: 'independent float64 reference of the importance-sampling loss: libs/preflight/src/importance-sampling.reference.ts (its sha256 is in the record)',
    },
    failures,
  };
  ctx.dir.writeJson(ctx.dir.preflightFile, result);
  for (const b of baseline_path) {
    for (const k of ['baseline_loss', 'baseline_gradient', 'reference_loss', 'reference_gradient'] as const) {
      ctx.progress.info(
        `  ${k.padEnd(18)} max_abs ${b[k].max_abs_error.toExponential(2)}  rel_l2 ${b[k].relative_l2_error.toExponential(2)}  cos ${b[k].cosine.toFixed(7)}  ${b[k].pass ? 'pass' : 'FAIL'}`,
      );
    }
  }
  for (const p of probe) ctx.progress.info(`  probe ${p.arm.padEnd(12)} loss ${Number.isFinite(p.loss) ? p.loss.toFixed(5) : p.loss}  ${p.pass ? 'pass' : `FAIL ${p.error}`}`);
  if (!result.pass) throw new RunStopped(`correctness preflight failed: ${failures.join('; ')}`, 'preflight');
  return result;
}
