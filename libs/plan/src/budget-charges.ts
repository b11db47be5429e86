// What a run charges against budget.max_tokens and budget.max_usd while it runs, unit by unit, in rx plan's counts
// (plan-cost.ts) at the run's token assumptions: a training or pilot step of an arm is stepWork's tokens, one model's
// evaluation n_eval greedy items; everything else the plan counts (shared init, preflight, held-out draws, the dev
// curve) is `fixed`, charged once with the first unit. So an uninterrupted run that runs the plan's worst-case pilot
// charges exactly the plan's total; a unit run again after a crash is charged again (it is spent again).
//   fixed = total - sum_a step_a (steps + pilot steps_a) - 3 eval,  pilot steps: 2 pilot.steps (treatment), 1 (baseline)
import { baselineArm, pilotSettings, treatmentArm, type ExperimentSpec } from '@rx/spec';
import { planCost, stepWork, type TokenAssumptions, type TokenCount } from './plan-cost';
import type { PriceEntry } from './price-table';

export interface BudgetCharges {
  fixed: TokenCount;
  /** arm -> one training (or pilot) step */
  step: Record<string, TokenCount>;
  /** one model's evaluation */
  evaluation: TokenCount;
  assumptions: TokenAssumptions;
}

/** where rx plan's default token figures come from: the spec's limits, upper bounds */
export function upperBoundSources(spec: ExperimentSpec): { prompt: string; sampled: string } {
  const maxTokens = spec.feasibility.effective_config.max_tokens;
  return { prompt: `prompt tokens at most max_seq_len - max_tokens = ${spec.max_seq_len - maxTokens} (an upper bound)`, sampled: `sampled tokens at most max_tokens = ${maxTokens} (an upper bound)` };
}

/** rx plan's default assumptions: prompt tokens at most max_seq_len - max_tokens, sampled tokens at most max_tokens */
export function upperBoundTokens(spec: ExperimentSpec): TokenAssumptions {
  const maxTokens = spec.feasibility.effective_config.max_tokens;
  const sources = upperBoundSources(spec);
  return { promptTokens: spec.max_seq_len - maxTokens, sampledTokens: maxTokens, source: `${sources.prompt}; ${sources.sampled}` };
}

const minus = (a: TokenCount, b: TokenCount, times: number): TokenCount => ({ sampled: a.sampled - times * b.sampled, prefill: a.prefill - times * b.prefill, trained: a.trained - times * b.trained });

export function budgetCharges(spec: ExperimentSpec, a: TokenAssumptions): BudgetCharges {
  const cost = planCost(spec, a);
  const pilot = pilotSettings(spec);
  const t = treatmentArm(spec).name;
  const b = baselineArm(spec).name;
  const step: Record<string, TokenCount> = {};
  let fixed = cost.total.tokens;
  for (const arm of spec.arms) {
    step[arm.name] = stepWork(arm, a).tokens;
    const pilotSteps = arm.name === t ? 2 * pilot.steps : arm.name === b ? 1 : 0;
    fixed = minus(fixed, step[arm.name], spec.steps + pilotSteps);
  }
  const evaluation: TokenCount = { sampled: spec.eval.n_examples * a.sampledTokens, prefill: spec.eval.n_examples * a.promptTokens, trained: 0 };
  fixed = minus(fixed, evaluation, 3);
  return { fixed, step, evaluation, assumptions: a };
}

// usd = (prefill P_p + sampled P_s + trained P_t) / 1e6 at the price entry's USD per million tokens
export function usdOfTokens(t: TokenCount, price: PriceEntry): number {
  return (t.prefill * price.usd_per_million.prefill + t.sampled * price.usd_per_million.sample + t.trained * price.usd_per_million.train) / 1e6;
}

