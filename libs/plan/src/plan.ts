// rx plan's whole answer for a spec: the decision (plan-decision.ts), the cost (plan-cost.ts), the wall time from
// seconds per unit (a measured run, or the timing table), money where the price table covers backend and model,
// and the spec's budget against all of it.
import { budget, pilotSettings, devEvalSettings, type ExperimentSpec } from '@rx/spec';
import { devPoints, planCost, totalTokens, type CostPlan, type TokenAssumptions, type WorkCount } from './plan-cost';
import { planDecision, type DecisionPlan, type Discordance } from './plan-decision';
import { usdOfTokens } from './budget-charges';
import { priceFor, PRICE_TABLE, type PriceEntry } from './price-table';
import type { UnitTiming } from './timing-table';

export interface PlanInputs {
  backend: 'embedded' | 'tinker';
  discordance: Discordance;
  tokens: TokenAssumptions;
  timing: UnitTiming;
  prices?: { entries: readonly PriceEntry[] };
}

export interface WallPlan {
  seconds: number;
  minutes: number;
  parts: { fixed: number; pilot: number; training: number; evaluation: number };
  source: string;
}

export interface BudgetCheck {
  within: boolean;
  /** one line per cap: its figure against the plan's */
  lines: string[];
  /** the caps exceeded, one line each */
  exceeded: string[];
}

export interface Plan {
  spec: string;
  backend: 'embedded' | 'tinker';
  n: number;
  alpha: number;
  margin: number;
  bound: DecisionPlan['bound'];
  discordance: Discordance;
  bounds: DecisionPlan['bounds'];
  decision_note: string | null;
  cost: {
    /** all arms, the pilot, the evaluation and the preflight together */
    tokens: WorkCount['tokens'];
    calls: WorkCount['calls'];
    checkpoints: number;
    per_arm: CostPlan['per_arm'];
    shared: CostPlan['shared'];
    assumptions: CostPlan['assumptions'];
    wall: WallPlan;
    usd: number | null;
    price: PriceEntry | null;
    money_note: string;
  };
  budget: BudgetCheck & { max_wall_minutes: number; gpu_hours: number; max_tokens: number | null; max_usd: number | null };
}

// wall = fixed + (2 pilot.steps + 1) step + held-out 64 x 8 items + steps x step (arms side by side) + dev points x D items + 3 n items
export function planWall(spec: ExperimentSpec, timing: UnitTiming): WallPlan {
  const pilot = pilotSettings(spec);
  const dev = devEvalSettings(spec);
  const item = timing.evalItemSeconds;
  const parts = {
    fixed: timing.fixedSeconds,
    pilot: (2 * pilot.steps + 1) * timing.stepSeconds + pilot.heldoutPrompts * pilot.heldoutSamplesPerPrompt * item,
    training: spec.steps * timing.stepSeconds + devPoints(spec.steps, dev.every) * dev.items * item,
    evaluation: 3 * spec.eval.n_examples * item,
  };
  const seconds = parts.fixed + parts.pilot + parts.training + parts.evaluation;
  return { seconds, minutes: seconds / 60, parts, source: timing.source };
}

// usd = (prefill P_p + sampled P_s + trained P_t) / 1e6, at the pinned table's entry for backend and model
export function planMoney(cost: CostPlan, price: PriceEntry | null): number | null {
  if (!price) return null;
  return usdOfTokens(cost.total.tokens, price);
}

export function buildPlan(specName: string, spec: ExperimentSpec, inputs: PlanInputs): Plan {
  const decision = planDecision(spec, inputs.discordance);
  const cost = planCost(spec, inputs.tokens);
  const wall = planWall(spec, inputs.timing);
  const price = priceFor(inputs.backend, spec.base_model, inputs.prices ?? PRICE_TABLE);
  const usd = planMoney(cost, price);
  const money_note = price
    ? `prices for ${inputs.backend} ${spec.base_model} from ${price.source} (${price.date})`
    : `no price: the pinned price table (libs/plan/src/price-table.ts) has no sourced entry for ${inputs.backend} ${spec.base_model}; tokens only`;
  const b = budget(spec);
  const lines: string[] = [];
  const exceeded: string[] = [];
  const cap = (ok: boolean, line: string) => {
    lines.push(line);
    if (!ok) exceeded.push(line);
  };
  cap(wall.minutes <= b.maxWallMinutes, `wall ${wall.minutes.toFixed(1)} min of ${b.maxWallMinutes} min`);
  if (inputs.backend === 'embedded') cap(true, `GPU hours 0 of ${b.gpuHours} (the embedded backend runs on the CPU)`);
  else lines.push(`GPU hours: not known for ${inputs.backend} (remote), not checked against ${b.gpuHours}`);
  const tokens = totalTokens(cost.total);
  if (b.maxTokens !== null) cap(tokens <= b.maxTokens, `tokens ${tokens} of ${b.maxTokens}`);
  if (b.maxUsd !== null) {
    if (usd === null) lines.push(`USD: cannot be checked against ${b.maxUsd} (no price)`);
    else cap(usd <= b.maxUsd, `USD ${usd.toFixed(2)} of ${b.maxUsd}`);
  }
  return {
    spec: specName,
    backend: inputs.backend,
    n: decision.n,
    alpha: decision.alpha,
    margin: decision.margin,
    bound: decision.bound,
    discordance: decision.discordance,
    bounds: decision.bounds,
    decision_note: decision.note,
    cost: { tokens: cost.total.tokens, calls: cost.total.calls, checkpoints: cost.total.checkpoints, per_arm: cost.per_arm, shared: cost.shared, assumptions: cost.assumptions, wall, usd, price, money_note },
    budget: { within: exceeded.length === 0, lines, exceeded, max_wall_minutes: b.maxWallMinutes, gpu_hours: b.gpuHours, max_tokens: b.maxTokens, max_usd: b.maxUsd },
  };
}
