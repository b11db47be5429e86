// Preflight (b): on one fixed GRPO batch, the loop with the treatment disabled (the advantage stage with the
// group-mean plan, then the trainer's datum assembly, both from libs/pipeline) against the stock cookbook path
// (stock-datum.reference.ts): the same advantages and Datums; then the importance-sampling loss and its
// gradient with respect to each action token's logprob, in float64, against the stock path (baseline_*) and
// against the independently written reference of libs/preflight (reference_*), under the spec's tolerances.
import type { Datum } from '@rx/backend';
import { expandFloat32, type StepPlan } from '@rx/contracts';
import { checkTolerance, importanceSamplingGradient, importanceSamplingLoss, referenceIsLoss, type ToleranceCheck } from '@rx/preflight';
import { computeAdvantages, datumsOf, InMemoryRolloutWindowStore } from '@rx/pipeline';
import type { PreflightPathTolerances } from '@rx/spec';
import { sha256Json } from '../../run/canonical-json';
import { fixedGrpoBatch } from './fixed-batch';
import { stockDatum, stockGroupMeanAdvantages } from './stock-datum.reference';

export type ToleranceRecord = Omit<ToleranceCheck, 'failures'> & { failures: string[]; tolerance: { atol: number; rtol: number; min_cosine?: number } };

export interface BaselinePathCheck {
  path_id: string;
  fixed_batch_sha256: string;
  rollouts: number;
  action_tokens: number;
  /** max |A_loop - A_stock| over the rollouts */
  advantages_max_abs_error: number;
  /** Datums equal field by field (tokens exactly, logprobs and advantages within 1e-12) */
  datums_equal: boolean;
  datums_detail: string;
  loss: number;
  baseline_loss: ToleranceRecord;
  baseline_gradient: ToleranceRecord;
  reference_loss: ToleranceRecord;
  reference_gradient: ToleranceRecord;
  pass: boolean;
}

const groupMeanPlan: StepPlan = {
  baseModel: 'preflight/none',
  groupSize: 8,
  sampling: { maxTokens: 16, temperature: 1, seed: 0 },
  advantage: { estimator: 'group_mean', dropConstantGroups: false },
  learningRate: 4e-5,
  formatCoef: 0.1,
};

function record(check: ToleranceCheck, tolerance: ToleranceRecord['tolerance']): ToleranceRecord {
  return { ...check, tolerance };
}

// the positions whose target is a completion (action) token: advantage and logprob live there
function actionPositions(d: Datum, promptLength: number): number[] {
  const out: number[] = [];
  for (let t = promptLength - 1; t < d.targetTokens.length; t++) out.push(t);
  return out;
}

export async function runBaselinePathCheck(tolerances: PreflightPathTolerances): Promise<BaselinePathCheck> {
  const { batch, trainingLogprobs } = fixedGrpoBatch(groupMeanPlan);
  const fixed_batch_sha256 = sha256Json({ batch, trainingLogprobs });

  // the loop: advantage stage (group mean), then the trainer's Datums
  const trainStep = await computeAdvantages(batch, { windows: new InMemoryRolloutWindowStore() });
  const loopDatums = datumsOf(trainStep);

  // the stock path: cookbook group-mean advantages and datum layout, plain loops
  const stockAdv = stockGroupMeanAdvantages(
    batch.rollouts.map((r) => r.reward),
    batch.rollouts.map((r) => r.promptId),
  );
  const promptTokens = new Map(batch.prompts.map((p) => [p.promptId, p.tokens]));
  const stockDatums = batch.rollouts.map((r, i) => stockDatum(promptTokens.get(r.promptId)!, r.tokens, r.logprobs.map(expandFloat32), stockAdv[i]));

  let advErr = 0;
  trainStep.rollouts.forEach((r, i) => (advErr = Math.max(advErr, Math.abs(r.advantage - stockAdv[i]))));
  const datumProblems: string[] = [];
  if (loopDatums.length !== stockDatums.length) datumProblems.push(`${loopDatums.length} loop datums vs ${stockDatums.length} stock datums`);
  loopDatums.forEach((d, i) => {
    const s = stockDatums[i];
    if (!s) return;
    const same = (a: number[], b: number[], tol: number) => a.length === b.length && a.every((x, k) => Math.abs(x - b[k]) <= tol);
    if (!same(d.inputTokens, s.inputTokens, 0)) datumProblems.push(`datum ${i}: inputTokens differ`);
    if (!same(d.targetTokens, s.targetTokens, 0)) datumProblems.push(`datum ${i}: targetTokens differ`);
    if (!same(d.samplingLogprobs, s.samplingLogprobs, 1e-12)) datumProblems.push(`datum ${i}: samplingLogprobs differ`);
    if (!same(d.advantages, s.advantages, 1e-12)) datumProblems.push(`datum ${i}: advantages differ`);
  });

  // the training policy's logprob at every target position (prompt positions: the value is masked by A = 0)
  const logprobsFor = (datums: Datum[]) =>
    datums.map((d, i) => {
      const plen = promptTokens.get(batch.rollouts[i].promptId)!.length;
      const lp = new Array<number>(d.targetTokens.length).fill(-1);
      trainingLogprobs[i].forEach((l, k) => (lp[plen - 1 + k] = l));
      return lp;
    });
  const loopLogprobs = logprobsFor(loopDatums);
  const stockLogprobs = logprobsFor(stockDatums);

  const loopLoss = importanceSamplingLoss(loopDatums, loopLogprobs);
  const stockLoss = importanceSamplingLoss(stockDatums, stockLogprobs);
  const ref = referenceIsLoss(
    stockDatums.map((d) => d.samplingLogprobs),
    stockDatums.map((d) => d.advantages),
    stockLogprobs,
  );
  // dL/dlogp at action positions only
  const actions = (datums: Datum[], flat: number[]): number[] => {
    const out: number[] = [];
    let offset = 0;
    datums.forEach((d, i) => {
      const plen = promptTokens.get(batch.rollouts[i].promptId)!.length;
      for (const t of actionPositions(d, plen)) out.push(flat[offset + t]);
      offset += d.targetTokens.length;
    });
    return out;
  };
  const loopGrad = actions(loopDatums, importanceSamplingGradient(loopDatums, loopLogprobs));
  const stockGrad = actions(stockDatums, importanceSamplingGradient(stockDatums, stockLogprobs));
  const refGrad = actions(stockDatums, ref.gradient);

  const t = tolerances.tolerances;
  const baseline_loss = record(checkTolerance([loopLoss], [stockLoss], t.baseline_loss), t.baseline_loss);
  const baseline_gradient = record(checkTolerance(loopGrad, stockGrad, t.baseline_gradient), t.baseline_gradient);
  const reference_loss = record(checkTolerance([loopLoss], [ref.loss], t.reference_loss), t.reference_loss);
  const reference_gradient = record(checkTolerance(loopGrad, refGrad, t.reference_gradient), t.reference_gradient);
  const datums_equal = datumProblems.length === 0;
  const pass = advErr <= 1e-12 && datums_equal && baseline_loss.pass && baseline_gradient.pass && reference_loss.pass && reference_gradient.pass;
  return {
    path_id: tolerances.pathId,
    fixed_batch_sha256,
    rollouts: batch.rollouts.length,
    action_tokens: loopGrad.length,
    advantages_max_abs_error: advErr,
    datums_equal,
    datums_detail: datums_equal ? `${loopDatums.length} datums equal` : datumProblems.slice(0, 5).join('; '),
    loss: loopLoss,
    baseline_loss,
    baseline_gradient,
    reference_loss,
    reference_gradient,
    pass,
  };
}
