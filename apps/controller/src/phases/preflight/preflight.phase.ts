// The correctness preflight, after the shared initialisation and before any training: (a) the estimator checks on
// synthetic windows, (b) the correctness checks on fixed batches sampled from the shared init, through the backend
// (correctness-checks.ts), (c) the spec's probe of each arm. Its result is written to preflight.json (through
// the schema of @rx/preflight) whether it passes or not; a failure stops the run with the failed checks named.
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import {
  finiteOrNull,
  preflightResultSchema,
  UPDATE_TOLERANCES,
  type PreflightCheck,
  type PreflightPath,
  type PreflightResult,
} from '@rx/preflight';
import { baselineArm, kernelSettings, preflightTolerances, sameOutputTolerance, treatmentArm } from '@rx/spec';
import { RunStopped, type ExperimentContext } from '../../experiment/experiment-context';
import { REPO_ROOT } from '../../infra/repo-root';
import { sha256Hex, sha256Json } from '@rx/run-dir';
import { initProbeDatums } from '../shared-init.phase';
import { compareSameOutput, describeSameOutput } from '../same-output';
import { runCorrectnessChecks } from './correctness-checks';
import { runEstimatorChecks } from './estimator-checks';
import { sampleFixedBatches, type FixedBatches } from './fixed-batch';
import { RX_LOOP, type LoopUnderTest } from './loop-under-test';
import { runProbe, type ProbeResult } from './probe';
import { unloadQuietly } from '../unload-model';
import { writeRunFile, type SharedInitResult } from '@rx/run-dir';

export type { PreflightResult } from '@rx/preflight';

/** what the preflight uses of a run */
export type PreflightContext = Pick<ExperimentContext, 'spec' | 'backend' | 'renderer' | 'data' | 'dir' | 'progress' | 'concurrency'> & { manifest: { runId: string } };

/** the tinker-cookbook commit whose compute_advantages and trajectory_to_data the stock path restates */
export const COOKBOOK_COMMIT = '9dfcc3a2cf44432d621a01005073dc6d76a1e87a';
const STOCK_FILE = 'apps/controller/src/phases/preflight/stock-datum.reference.ts';
const REFERENCE_FILE = 'libs/estimators/src/kernel-baseline.reference.ts';
const IMPLEMENTATION_FILES = ['libs/estimators/src/group-mean.ts', 'libs/estimators/src/kernel-baseline.ts', 'libs/pipeline/src/stages/advantage.stage.ts', 'libs/pipeline/src/datum-builder.ts'];

function fileRevision(rel: string): string {
  try {
    return `${rel} sha256 ${sha256Hex(readFileSync(path.join(REPO_ROOT, rel)))}`;
  } catch {
    return `${rel} (not readable here)`;
  }
}

function line(c: PreflightCheck): string {
  const e = c.errors;
  const f = (x: number | null, digits = 2) => (x === null ? 'n/a' : x.toExponential(digits));
  return `  ${c.id.padEnd(21)} max_abs ${f(e.max_abs_error)}  rel_l2 ${f(e.relative_l2_error)}  cos ${e.cosine_similarity === null ? 'n/a' : e.cosine_similarity.toFixed(9)}  ref_max_abs ${f(e.reference_max_abs)}  ${c.pass ? 'pass' : 'FAIL'}`;
}

/** The fixed batches of a run, sampled from the shared init by the loop's sample and grade stages. */
export function fixedBatchesOf(ctx: PreflightContext, init: SharedInitResult): Promise<FixedBatches> {
  return sampleFixedBatches({ spec: ctx.spec, backend: ctx.backend, renderer: ctx.renderer, train: ctx.data.train, samplerPath: init.sampler_path, runId: ctx.manifest.runId, bandwidth: kernelSettings(ctx.spec).bandwidth, concurrency: ctx.concurrency });
}

export async function runPreflight(ctx: PreflightContext, init: SharedInitResult, loop: LoopUnderTest = RX_LOOP, batches?: FixedBatches): Promise<PreflightResult> {
  const { spec } = ctx;
  const kernel = kernelSettings(spec);
  ctx.progress.info('preflight (a): kernel estimator, forced activation and non-activation');
  const estimator_checks = await runEstimatorChecks(kernel.bandwidth);

  ctx.progress.info(`preflight (b): fixed batches from the shared init (${init.sampler_path}) through the ${ctx.backend.kind} backend`);
  const fixed = batches ?? (await fixedBatchesOf(ctx, init));
  const lora = { baseModel: init.lora.base_model, rank: init.lora.rank, seed: init.lora.seed };
  const [pathSpec] = preflightTolerances(spec);
  const correctness = await runCorrectnessChecks({
    backend: ctx.backend,
    lora,
    initStatePath: init.state_path,
    learningRate: baselineArm(spec).lr,
    bandwidth: kernel.bandwidth,
    windowSize: kernel.windowSize,
    tolerances: pathSpec.tolerances,
    fixed,
    loop,
    warn: (l) => ctx.progress.warn(l),
  });

  // the shared init is untouched: a fresh copy gives the outputs the shared-init phase hashed
  const copy = await ctx.backend.createLoraTrainingClient(lora);
  await copy.loadState(init.state_path);
  const copyLogprobs = (await copy.forwardBackward(initProbeDatums(ctx), 'importance_sampling')).logprobs;
  await unloadQuietly((l) => ctx.progress.warn(l), copy, "the preflight's untouched-init copy");
  // within the same-output tolerance of the shared init's logprobs (a run made before they were kept: bit for bit)
  const same_output = init.probe_logprobs ? compareSameOutput(copyLogprobs, init.probe_logprobs, sameOutputTolerance(spec)) : undefined;
  const outputs = sha256Json(copyLogprobs);
  const untouched = same_output ? same_output.pass : Object.values(init.arms).every((a) => a.output_sha256 === outputs);

  ctx.progress.info('preflight (c): probe, one forward_backward + optim_step per arm');
  const probe: ProbeResult[] = [];
  for (const arm of spec.arms) {
    probe.push(await runProbe({ spec, arm, backend: ctx.backend, renderer: ctx.renderer, train: ctx.data.train, runId: ctx.manifest.runId, bandwidth: kernel.bandwidth, concurrency: ctx.concurrency, warn: (l) => ctx.progress.warn(l) }));
  }

  const failures: string[] = [];
  const failed: string[] = [];
  const fail = (id: string, why: string) => {
    if (!failed.includes(id)) failed.push(id);
    failures.push(`${id}: ${why}`);
  };
  if (!estimator_checks.forced_activation.pass) fail('forced_activation', estimator_checks.forced_activation.detail);
  if (!estimator_checks.forced_non_activation.pass) fail('forced_non_activation', estimator_checks.forced_non_activation.detail);
  for (const c of correctness.checks) if (!c.pass) fail(c.id, c.failures.join('; '));
  if (!untouched) fail('shared_init_untouched', `a fresh copy of ${init.state_path} no longer gives the outputs of the shared initialisation${same_output ? ` (${describeSameOutput(same_output)})` : ''}`);
  for (const p of probe) if (!p.pass) fail(`probe_${p.arm}`, p.error ?? 'failed');

  const grpoDesc = `${baselineArm(spec).name} step 0 (${baselineArm(spec).groups_per_batch} prompts x ${baselineArm(spec).group_size}), sampled from the shared init ${init.sampler_path}, graded by the env reward`;
  const gs1Desc = `${treatmentArm(spec).name} step 1 (${treatmentArm(spec).groups_per_batch} prompts x ${treatmentArm(spec).group_size}) with its step-0 batch as the kernel window carried into it, sampled from the shared init`;
  const paths: PreflightPath[] = preflightTolerances(spec).map((p) => ({
    id: p.pathId,
    kind: p.kind,
    fixed_input: {
      sha256: correctness.sha256.grpo,
      description: `Baseline: ${grpoDesc}; loop Datums vs stock cookbook compute_advantages + trajectory_to_data; logprobs from one forward_backward on a throw-away copy of the shared init. Treatment fixed batch sha256 ${correctness.sha256.gs1}: ${gs1Desc}.`,
    },
    baseline_revision: `tinker-cookbook ${COOKBOOK_COMMIT} (tinker_cookbook/rl/data_processing.py compute_advantages, trajectory_to_data), restated in ${fileRevision(STOCK_FILE)}`,
    reference_revision: `${fileRevision(REFERENCE_FILE)} (independent float64 loops, run at preflight time)`,
    implementation_revision: IMPLEMENTATION_FILES.map(fileRevision).join('; '),
    precision: `advantages float64; ${ctx.backend.kind} backend logprobs and loss float32; loss and gradient recomputed in float64`,
    normalization:
      'importance_sampling loss = -sum over action tokens of exp(lp - lp_sampled) * A (sum, no token-count normalisation); gradient = dLoss/dlogprob per action token, concatenated over datums; prompt tokens excluded',
    errors: correctness.errors,
  }));

  const result = preflightResultSchema.parse({
    pass: failures.length === 0,
    failed_checks: failed,
    failures,
    backend: ctx.backend.kind,
    shared_init: {
      state_path: init.state_path,
      untouched,
      ...(same_output ? { same_output } : {}),
      note: 'every check ran on throw-away training clients loaded from the shared initial state (the update-direction check stepped two of them); the arms load the state itself, and a fresh copy after the checks gives the outputs hashed at the shared initialisation',
    },
    fixed_inputs: [
      { id: 'grpo_fixed_batch', sha256: correctness.sha256.grpo, description: grpoDesc, rollouts: fixed.grpo.rollouts.length, action_tokens: correctness.action_tokens.grpo },
      { id: 'gs1_fixed_batch', sha256: correctness.sha256.gs1, description: gs1Desc, rollouts: fixed.gs1.rollouts.length, action_tokens: correctness.action_tokens.gs1 },
    ],
    paths,
    checks: correctness.checks,
    update_direction: {
      ...correctness.update,
      ...Object.fromEntries(
        (['delta_loss', 'first_order_delta_loss', 'predicted_delta_loss', 'warm_copy_delta_loss', 'linear_rel_error', 'warm_copy_rel_error', 'max_abs_logprob_change'] as const).map((k) => [k, finiteOrNull(correctness.update[k])]),
      ),
      tolerances: { ...UPDATE_TOLERANCES },
    },
    estimator_checks,
    probe,
  });
  writeRunFile(ctx.dir, 'preflight.json', result);

  for (const p of paths) ctx.progress.info(`  fixed input ${p.fixed_input.sha256}; baseline ${p.baseline_revision}; reference ${p.reference_revision}; ${p.precision}`);
  for (const c of correctness.checks) ctx.progress.info(line(c));
  const u = correctness.update;
  ctx.progress.info(`  update: dL ${u.delta_loss}, predicted ${u.predicted_delta_loss} (first order ${u.first_order_delta_loss}), warm copy ${u.warm_copy_delta_loss} at lr ${u.learning_rate}`);
  for (const p of probe) ctx.progress.info(`  probe ${p.arm.padEnd(12)} loss ${Number.isFinite(p.loss) ? p.loss.toFixed(5) : p.loss}  ${p.pass ? 'pass' : `FAIL ${p.error}`}`);
  if (!result.pass) throw new RunStopped(`correctness preflight failed (${failed.join(', ')}); evidence in ${ctx.dir.relative(ctx.dir.preflightFile)}: ${failures.slice(0, 3).join(' | ')}`, 'preflight');
  return result;
}
