// Preflight (b), the correctness checks, on the fixed batches and through the backend. Every backend call runs
// on a throw-away training client loaded from the shared initial state (the state itself is never stepped):
//   E: forward_backward on the loop's GS1 Datums (the trainer's own loss of that batch, and each Datum's per-target
//      logprobs, Tinker's loss_fn_outputs), and on any stock Datum the loop did not build the same;
//   A: forward_backward on the loop's GRPO Datums (the trainer's loss and logprobs), optim_step at the spec's lr,
//      forward_backward again: after the step the ratios exp(logp - logp_sampled) are no longer 1, so a trainer
//      that ignores the sampling logprobs reports a different loss;
//   B: forward_backward, optim_step at lr 0 (moments and step count advance), forward_backward, optim_step at the spec's lr, forward_backward.
// The checks, all in float64 from the backend's float32 logprobs:
//   baseline_*:  the loop (rx's group-mean estimator and Datum builder) against the stock cookbook path
//                (stock-datum.reference.ts), advantages, Datums, loss and dLoss/dlogprob per action token;
//   reference_*: the same on the GS1 batch, rx's kernel baseline (window carried from step 0) against the
//                independent float64 reference (libs/estimators kernel-baseline.reference.ts);
//   backend_loss: the loss the backend reports for each forward_backward against the importance-sampling loss
//                recomputed from the logprobs it returned (the spec's loss tolerance);
//   update_direction: A's step must lower the surrogate as the gradients at its two ends predict, and B's step must equal A's.
import { TinkerApiError, TinkerRequestFailedError, type Datum, type LoraConfig, type PolicyBackend, type TrainingClient } from '@rx/backend';
import { expandFloat32, type GradedBatch, type TrainStep } from '@rx/contracts';
import { referenceKernelBaseline, type ReferencePoint } from '@rx/estimators';
import { adamParamsFor, InMemoryRolloutWindowStore } from '@rx/pipeline';
import {
  checkTolerance,
  evaluateUpdateDirection,
  finiteOrNull,
  referenceIsLoss,
  UPDATE_TOLERANCES,
  type ComparisonErrors,
  type PreflightCheck,
  type PreflightCheckId,
  type Tolerance,
  type ToleranceCheck,
  type UpdateDirection,
} from '@rx/preflight';
import type { PreflightPathTolerances } from '@rx/spec';
import { batchSha256, type FixedBatches } from './fixed-batch';
import type { LoopUnderTest } from './loop-under-test';
import { stockDatum, stockGroupMeanAdvantages } from './stock-datum.reference';
import { unloadQuietly } from '../unload-model';

/** advantages are float64 on both sides: they must agree to rounding */
export const ADVANTAGE_TOLERANCE: Tolerance = { atol: 1e-12, rtol: 0 };

export interface CorrectnessInputs {
  backend: PolicyBackend;
  lora: LoraConfig;
  initStatePath: string;
  learningRate: number;
  bandwidth: number;
  windowSize: number;
  tolerances: PreflightPathTolerances['tolerances'];
  fixed: FixedBatches;
  loop: LoopUnderTest;
  /** one line for the user (the service refused the lr-0 step, and what the preflight does instead) */
  warn?: (line: string) => void;
}

/** A refusal of the request itself (HTTP 4xx, or a future failed as the user's): not a fault to retry. */
function isRefusal(err: unknown): err is Error {
  if (err instanceof TinkerRequestFailedError) return err.category === 'user';
  return err instanceof TinkerApiError && err.status >= 400 && err.status < 500 && err.status !== 408 && err.status !== 409 && err.status !== 429;
}

export interface CorrectnessChecks {
  checks: PreflightCheck[];
  update: UpdateDirection & { learning_rate: number; warm_copy: string };
  sha256: { grpo: string; gs1: string };
  action_tokens: { grpo: number; gs1: number };
  /** the loss and gradient of each path, for the record's errors */
  errors: Record<'baseline_loss' | 'baseline_gradient' | 'reference_loss' | 'reference_gradient', ComparisonErrors>;
}

export function errorsOf(c: ToleranceCheck): ComparisonErrors {
  return {
    max_abs_error: finiteOrNull(c.max_abs_error),
    reference_max_abs: finiteOrNull(c.reference_max_abs),
    relative_l2_error: finiteOrNull(c.relative_l2_error),
    cosine_similarity: finiteOrNull(c.cosine),
  };
}

function check(id: PreflightCheckId, compared: string, sha: string, result: ToleranceCheck, tolerance: Tolerance, extra: string[] = []): PreflightCheck {
  const failures = [...extra, ...result.failures];
  return { id, compared, fixed_input_sha256: sha, errors: errorsOf(result), tolerance, pass: failures.length === 0, failures };
}

/** a Datum's tokens and sampling logprobs: one forward pass serves every Datum with the same key */
function tokenKey(d: Datum): string {
  return `${d.inputTokens.join(',')}|${d.targetTokens.join(',')}|${d.samplingLogprobs.join(',')}`;
}

/** the stock Datums of a batch: cookbook layout, the given advantage per rollout, sampling logprobs as sampled */
function stockDatums(batch: GradedBatch, advantages: readonly number[]): Datum[] {
  const prompts = new Map(batch.prompts.map((p) => [p.promptId, p.tokens]));
  return batch.rollouts.map((r, i) => stockDatum(prompts.get(r.promptId)!, r.tokens, r.logprobs.map(expandFloat32), advantages[i]));
}

/** the first action (completion) target of each stock Datum: len(prompt) - 1 */
function actionStarts(batch: GradedBatch): number[] {
  const prompts = new Map(batch.prompts.map((p) => [p.promptId, p.tokens.length]));
  return batch.rollouts.map((r) => prompts.get(r.promptId)! - 1);
}

/** entries of a flat per-position vector at the action positions of each Datum (the stock layout's) */
function atActions(datums: readonly Datum[], flat: readonly number[], starts: readonly number[]): number[] {
  const out: number[] = [];
  let offset = 0;
  datums.forEach((d, i) => {
    for (let t = starts[i] ?? 0; t < d.targetTokens.length; t++) out.push(flat[offset + t]);
    offset += d.targetTokens.length;
  });
  return out;
}

/** field-by-field comparison of the loop's Datums with the stock ones: tokens exactly, float fields to 1e-12 */
function datumsCheck(id: PreflightCheckId, sha: string, loop: readonly Datum[], stock: readonly Datum[]): PreflightCheck {
  const problems: string[] = [];
  if (loop.length !== stock.length) problems.push(`${loop.length} loop Datums for ${stock.length} stock Datums`);
  const flat = (ds: readonly Datum[], f: 'samplingLogprobs' | 'advantages') => ds.flatMap((d) => d[f]);
  stock.forEach((s, i) => {
    const d = loop[i];
    if (!d) return;
    const same = (a: number[], b: number[]) => a.length === b.length && a.every((x, k) => x === b[k]);
    if (!same(d.inputTokens, s.inputTokens)) problems.push(`Datum ${i}: input tokens differ from the cookbook layout`);
    if (!same(d.targetTokens, s.targetTokens)) problems.push(`Datum ${i}: target tokens differ from the cookbook layout`);
    if (d.samplingLogprobs.length !== s.samplingLogprobs.length || d.advantages.length !== s.advantages.length) problems.push(`Datum ${i}: ${d.advantages.length} positions, the cookbook layout has ${s.advantages.length}`);
  });
  const tol: Tolerance = { atol: 1e-12, rtol: 0 };
  const lp = checkTolerance(flat(loop, 'samplingLogprobs'), flat(stock, 'samplingLogprobs'), tol);
  const adv = checkTolerance(flat(loop, 'advantages'), flat(stock, 'advantages'), tol);
  if (!lp.pass) problems.push(`sampling logprobs differ from the sampled ones (max abs ${lp.max_abs_error})`);
  if (!adv.pass) problems.push(`per-position advantages differ (max abs ${adv.max_abs_error})`);
  return check(id, 'loop Datums vs cookbook trajectory_to_data layout: tokens exact, per-position advantages (shown) and sampling logprobs to 1e-12', sha, adv, tol, problems.slice(0, 6));
}

// dL/dlogp_t = -exp(logp_t - logp_sampled_t) * A_t, each operation rounded to float32 as a float32 trainer forms it
function float32IsGradient(datums: readonly Datum[], logprobs: readonly (readonly number[])[]): number[] {
  const f = Math.fround;
  return datums.flatMap((d, k) => d.advantages.map((adv, t) => -f(f(Math.exp(f(f(logprobs[k][t]) - f(d.samplingLogprobs[t])))) * f(adv))));
}

/** a model loaded from the shared init; `opened` keeps it to be unloaded when the checks end */
async function freshCopy(i: CorrectnessInputs, opened: TrainingClient[]): Promise<TrainingClient> {
  const client = await i.backend.createLoraTrainingClient(i.lora);
  opened.push(client);
  await client.loadState(i.initStatePath);
  return client;
}

/** the loss the backend reported for a forward_backward, and the float64 loss of the logprobs it returned */
interface ReportedLoss {
  call: string;
  reported: number;
  recomputed: number;
}

export async function runCorrectnessChecks(i: CorrectnessInputs): Promise<CorrectnessChecks> {
  // every fresh copy is freed on the service once the checks are done, however they end
  const opened: TrainingClient[] = [];
  try {
    return await correctnessChecks(i, opened);
  } finally {
    for (const [k, c] of opened.entries()) await unloadQuietly(i.warn ?? (() => undefined), c, `preflight copy ${k + 1}`);
  }
}

async function correctnessChecks(i: CorrectnessInputs, opened: TrainingClient[]): Promise<CorrectnessChecks> {
  const { fixed, loop, tolerances: tol } = i;
  const shaGrpo = batchSha256(fixed.grpo);
  const shaGs1 = batchSha256(fixed.gs1Window, fixed.gs1);

  // the loop under test: advantages (the GS1 window carried from step 0 into step 1) and Datums
  const grpoStep: TrainStep = await loop.computeAdvantages(fixed.grpo, { windows: new InMemoryRolloutWindowStore() });
  const windows = new InMemoryRolloutWindowStore();
  await loop.computeAdvantages(fixed.gs1Window, { windows });
  const gs1Step: TrainStep = await loop.computeAdvantages(fixed.gs1, { windows });
  const loopGrpo = loop.datumsOf(grpoStep);
  const loopGs1 = loop.datumsOf(gs1Step);

  // the stock path (cookbook compute_advantages) and the independent kernel reference
  const stockAdv = stockGroupMeanAdvantages(
    fixed.grpo.rollouts.map((r) => r.reward),
    fixed.grpo.rollouts.map((r) => r.promptId),
  );
  const points = (b: GradedBatch): ReferencePoint[] => b.rollouts.map((r) => ({ id: r.rolloutId, r: r.reward, x: r.phi[0], y: r.phi[1] }));
  const reference = referenceKernelBaseline(points(fixed.gs1), points(fixed.gs1Window), i.bandwidth, i.windowSize);
  const stockGrpo = stockDatums(fixed.grpo, stockAdv);
  const stockGs1 = stockDatums(fixed.gs1, reference.a);

  const reported: ReportedLoss[] = [];
  const forwardBackward = async (client: TrainingClient, datums: Datum[], call: string): Promise<number[][]> => {
    const out = await client.forwardBackward(datums, 'importance_sampling');
    const lp = out.logprobs.map((l) => l.slice());
    reported.push({ call, reported: out.loss, recomputed: referenceIsLoss(datums.map((d) => d.samplingLogprobs), datums.map((d) => d.advantages), lp).loss });
    return lp;
  };
  // the loop's own loss of each batch is the one the backend's trainer reports for the loop's Datums (float32);
  // the per-target logprobs of both sides come from these passes of fresh copies (one more for stock Datums
  // that no loop Datum shares: only when the loop built different ones)
  const byKey = new Map<string, number[]>();
  const keep = (datums: readonly Datum[], lp: number[][]) => datums.forEach((d, k) => byKey.set(tokenKey(d), lp[k]));
  const e = await freshCopy(i, opened);
  const e0 = await forwardBackward(e, loopGs1, "E: the loop's GS1 Datums");
  keep(loopGs1, e0);
  const trainerLossGs1 = reported[reported.length - 1].reported;
  const a = await freshCopy(i, opened);
  const a0 = await forwardBackward(a, loopGrpo, "A: the loop's GRPO Datums, before the step");
  keep(loopGrpo, a0);
  const trainerLossGrpo = reported[reported.length - 1].reported;
  const missingKeys = new Set<string>();
  const missing = [...stockGrpo, ...stockGs1].filter((d) => {
    const key = tokenKey(d);
    if (byKey.has(key) || missingKeys.has(key)) return false;
    missingKeys.add(key);
    return true;
  });
  if (missing.length > 0) keep(missing, await forwardBackward(e, missing, 'E: the stock Datums no loop Datum shares'));
  // a Datum's logprobs are those of the pass it was in; a stock Datum with the loop Datum's tokens at its index takes
  // the loop Datum's (logprobs depend on the tokens alone; two passes over one input need not agree bit for bit on
  // a GPU service, nor two equal rollouts in one pass)
  const sameTokens = (a: Datum, b: Datum) => a.inputTokens.join(',') === b.inputTokens.join(',') && a.targetTokens.join(',') === b.targetTokens.join(',');
  const logprobsOf = (datums: readonly Datum[], loopDatums: readonly Datum[], loopLp: readonly number[][]) =>
    datums.map((d, k) => (loopDatums[k] !== undefined && sameTokens(loopDatums[k], d) ? loopLp[k] : byKey.get(tokenKey(d))!));

  // baseline and reference paths: loss and dLoss/dlogprob per action token, loop vs stock, float64
  const pathChecks = (prefix: 'baseline' | 'reference', sha: string, batch: GradedBatch, loopDatums: Datum[], loopLp: number[][], stock: Datum[], step: TrainStep, expectedAdv: readonly number[], loopLoss: number) => {
    const starts = actionStarts(batch);
    const stockLp = logprobsOf(stock, loopDatums, loopLp);
    const loopGrad = atActions(loopDatums, float32IsGradient(loopDatums, loopLp), starts);
    const ref = referenceIsLoss(stock.map((d) => d.samplingLogprobs), stock.map((d) => d.advantages), stockLp);
    const refGrad = atActions(stock, ref.gradient, starts);
    const what = prefix === 'baseline' ? 'the stock cookbook path' : 'the independent float64 kernel reference';
    const advantagesByRollout = new Map(step.rollouts.map((r) => [r.rolloutId, r.advantage]));
    const loopAdv = batch.rollouts.map((r) => advantagesByRollout.get(r.rolloutId) ?? NaN);
    return [
      check(`${prefix}_advantages`, `rx's advantage per rollout vs ${what}`, sha, checkTolerance(loopAdv, expectedAdv, ADVANTAGE_TOLERANCE), ADVANTAGE_TOLERANCE),
      datumsCheck(`${prefix}_datums`, sha, loopDatums, stock),
      check(`${prefix}_loss`, `the loss the backend's trainer reports for the loop's Datums (float32) vs ${what}, float64 from the backend's logprobs`, sha, checkTolerance([loopLoss], [ref.loss], tol[`${prefix}_loss`]), tol[`${prefix}_loss`]),
      check(`${prefix}_gradient`, `dLoss/dlogprob per action token, concatenated over Datums: the loop's Datums in float32 as the trainer forms it vs ${what} in float64`, sha, checkTolerance(loopGrad, refGrad, tol[`${prefix}_gradient`]), tol[`${prefix}_gradient`]),
    ];
  };
  const checks: PreflightCheck[] = [
    ...pathChecks('baseline', shaGrpo, fixed.grpo, loopGrpo, a0, stockGrpo, grpoStep, stockAdv, trainerLossGrpo),
    ...pathChecks('reference', shaGs1, fixed.gs1, loopGs1, e0, stockGs1, gs1Step, reference.a, trainerLossGs1),
  ];

  // the update: A (one step at lr) and B (a step at lr 0, then one at lr) on the loop's GRPO Datums
  const surrogate = (lp: number[][]) => referenceIsLoss(loopGrpo.map((d) => d.samplingLogprobs), loopGrpo.map((d) => d.advantages), lp);
  await a.optimStep(adamParamsFor(i.learningRate));
  const a1 = await forwardBackward(a, loopGrpo, 'A: after one optim_step at lr');
  let b = await freshCopy(i, opened);
  let b0 = await forwardBackward(b, loopGrpo, 'B: before');
  let warm_copy = `stepped once at lr ${i.learningRate * UPDATE_TOLERANCES.warm_lr_fraction} (moments and step count advance, the weights stay), then at lr ${i.learningRate}`;
  try {
    await b.optimStep(adamParamsFor(i.learningRate * UPDATE_TOLERANCES.warm_lr_fraction));
    await forwardBackward(b, loopGrpo, 'B: after an optim_step at lr 0');
  } catch (err) {
    if (!isRefusal(err)) throw err;
    // the service refuses a step at lr 0: B is made another way, loaded afresh from the saved state
    const why = err.message.split('\n')[0].slice(0, 200);
    warm_copy = `the service refused an optim_step at lr 0 (${why}); B reloaded from the saved state instead, then stepped at lr ${i.learningRate}`;
    i.warn?.(`preflight: ${warm_copy}`);
    b = await freshCopy(i, opened);
    b0 = await forwardBackward(b, loopGrpo, 'B: before (reloaded)');
  }
  await b.optimStep(adamParamsFor(i.learningRate));
  const b2 = await forwardBackward(b, loopGrpo, 'B: after a further optim_step at lr');
  const before = surrogate(a0);
  const after = surrogate(a1);
  const a0Flat = a0.flat();
  const update = evaluateUpdateDirection({
    lossBefore: before.loss,
    lossAfter: after.loss,
    gradient: before.gradient,
    gradientAfter: after.gradient,
    logprobChange: a1.flat().map((x, k) => x - a0Flat[k]),
    warmCopyDelta: surrogate(b2).loss - surrogate(b0).loss,
  });
  const updateErrors = checkTolerance([update.delta_loss, update.warm_copy_delta_loss], [update.predicted_delta_loss, update.predicted_delta_loss], { atol: 0, rtol: UPDATE_TOLERANCES.linear_rtol });
  checks.push({
    id: 'update_direction',
    compared: `surrogate change after one optim_step at lr ${i.learningRate} (fresh copy, and a copy stepped at lr 0 first) vs the change the gradients at the step's two ends predict, sum (g + g')/2 * dlogprob`,
    fixed_input_sha256: shaGrpo,
    errors: errorsOf(updateErrors),
    tolerance: { atol: 0, rtol: UPDATE_TOLERANCES.linear_rtol },
    pass: update.pass,
    failures: update.failures,
  });

  // the backend's own loss of every forward_backward against the float64 recomputation
  const lossTol = tol.baseline_loss;
  const backend = checkTolerance(reported.map((r) => r.reported), reported.map((r) => r.recomputed), lossTol);
  const worst = reported
    .map((r) => ({ ...r, excess: Math.abs(r.reported - r.recomputed) - (lossTol.atol + lossTol.rtol * Math.abs(r.recomputed)) }))
    .filter((r) => !(r.excess <= 0))
    .map((r) => `${r.call}: the backend reported loss ${r.reported}, the logprobs it returned give ${r.recomputed}`);
  checks.push(check('backend_loss', `loss the backend reports for forward_backward(importance_sampling) vs -sum exp(logp - logp_sampled) * A recomputed in float64 from its logprobs (${reported.length} calls)`, shaGrpo, backend, lossTol, worst.slice(0, 3)));

  const byId = (id: PreflightCheckId) => checks.find((c) => c.id === id)!.errors;
  return {
    checks,
    update: { ...update, learning_rate: i.learningRate, warm_copy },
    sha256: { grpo: shaGrpo, gs1: shaGs1 },
    action_tokens: { grpo: atActions(stockGrpo, stockGrpo.flatMap((d) => d.advantages), actionStarts(fixed.grpo)).length, gs1: atActions(stockGs1, stockGs1.flatMap((d) => d.advantages), actionStarts(fixed.gs1)).length },
    errors: { baseline_loss: byId('baseline_loss'), baseline_gradient: byId('baseline_gradient'), reference_loss: byId('reference_loss'), reference_gradient: byId('reference_gradient') },
  };
}
