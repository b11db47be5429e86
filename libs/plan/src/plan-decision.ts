// What the spec's decision can conclude, per bound rx offers: the half-width at the planned n, the smallest observed
// effect that concludes noninferiority (the primary criterion's margin) and superiority (a criterion with margin >= 0,
// where the spec defines one), and the power at true effects 0, +0.01, +0.03 and the margin, under a stated
// discordance rate (@rx/stats' bound-power for the formulas).
import { BOUND_NAMES, minConcludingEffect, plannedHalfwidth, plannedPower, type BoundName, type PlanSetting } from '@rx/stats';
import { decisionRule, type ExperimentSpec } from '@rx/spec';

/** the published gs1-vs-grpo run: 152 + 112 of 1319 items were right under one arm only */
export const DEFAULT_DISCORDANCE = { rate: 264 / 1319, source: 'default: the published gs1-vs-grpo run, 264 of 1319 items discordant (152 only GS1, 112 only GRPO)' };

export interface Discordance {
  rate: number;
  source: string;
}

export interface BoundPlan {
  role: 'pre-registered' | 'exploratory';
  half_width: number;
  min_effect_noninferior: number | null;
  /** null where the spec defines no superiority criterion (margin >= 0) or none can conclude */
  min_effect_superior: number | null;
  /** true effect (as a string key) -> P(the rule concludes noninferiority); null where the effect cannot happen at the discordance */
  power: Record<string, number | null>;
  how: string;
}

export interface DecisionPlan {
  n: number;
  alpha: number;
  margin: number;
  bound: BoundName;
  discordance: Discordance;
  /** the effects the power is given at */
  effects: number[];
  bounds: Record<BoundName, BoundPlan>;
  /** why power is not given, when the criterion is not a difference of 0/1 outcomes with weights +w/-w */
  note: string | null;
}

const HOW: Record<BoundName, string> = {
  hoeffding: 'exact: margin + half-width; power by the exact multinomial sum',
  empirical_bernstein: 'half-width at true effect 0 and the discordance; power by the exact multinomial sum',
  betting: 'half-width the median of 200 simulated evaluations; min effect the median over 41 arrangements of the items; power simulated (200 draws)',
};

export function planDecision(spec: ExperimentSpec, discordance: Discordance): DecisionPlan {
  const rule = decisionRule(spec);
  const n = spec.eval.n_examples;
  const w = rule.weights.treatment;
  const binary = rule.bounds[0] === 0 && rule.bounds[1] === 1 && w > 0 && rule.weights.baseline === -w;
  const effects = [0, 0.01, 0.03, rule.margin].map((e) => e * (binary ? w : 1));
  const setting: PlanSetting = { n, alpha: rule.alpha, margin: rule.margin, weight: binary ? w : 1, discordance: discordance.rate };
  const superiority = spec.decision_rule.criteria.find((c) => c.margin >= 0 && c.weights.treatment === rule.weights.treatment && c.weights.baseline === rule.weights.baseline);
  const bounds = {} as Record<BoundName, BoundPlan>;
  for (const bound of [rule.bound, ...BOUND_NAMES.filter((b) => b !== rule.bound)]) {
    bounds[bound] = {
      role: bound === rule.bound ? 'pre-registered' : 'exploratory',
      half_width: binary || bound === 'hoeffding' ? plannedHalfwidth(bound, setting) : NaN,
      min_effect_noninferior: binary || bound === 'hoeffding' ? minConcludingEffect(bound, setting) : null,
      min_effect_superior: superiority && (binary || bound === 'hoeffding') ? minConcludingEffect(bound, setting, superiority.margin) : null,
      power: Object.fromEntries(effects.map((e) => [String(e), binary ? plannedPower(bound, setting, e) : null])),
      how: HOW[bound],
    };
  }
  return {
    n,
    alpha: rule.alpha,
    margin: rule.margin,
    bound: rule.bound,
    discordance,
    effects,
    bounds,
    note: binary ? null : 'power and the data-dependent bounds assume per-item outcomes in {0, 1} with weights +w/-w; this criterion is not one',
  };
}
