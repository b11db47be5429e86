import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { loadSpecText, type ExperimentSpec } from '@rx/spec';
import { buildPlan, planMoney, planWall } from './plan';
import { DEFAULT_DISCORDANCE } from './plan-decision';
import { formatPlan } from './plan-text';
import { priceFor, type PriceEntry } from './price-table';
import { DEFAULT_TIMING } from './timing-table';

function specFile(name: string): ExperimentSpec {
  const r = loadSpecText(readFileSync(resolve(__dirname, '..', '..', '..', 'specs', name), 'utf8'));
  if (!r.ok) throw new Error(r.errors.join('\n'));
  return r.spec;
}
const tokens = { promptTokens: 512, sampledTokens: 512, source: 'test' };
const inputs = { backend: 'tinker' as const, discordance: DEFAULT_DISCORDANCE, tokens, timing: DEFAULT_TIMING.tinker };

describe('buildPlan', () => {
  const plan = buildPlan('gs1-vs-grpo.json', specFile('gs1-vs-grpo.json'), inputs);

  it("gives the published spec's decision: Hoeffding 0.0674, +0.0374 at n = 1319; the others exploratory and tighter", () => {
    expect(plan.n).toBe(1319);
    expect(plan.bound).toBe('hoeffding');
    expect(plan.bounds.hoeffding.role).toBe('pre-registered');
    expect(plan.bounds.hoeffding.half_width).toBeCloseTo(0.0674, 4);
    expect(plan.bounds.hoeffding.min_effect_noninferior).toBeCloseTo(0.0374, 4);
    expect(plan.bounds.empirical_bernstein.role).toBe('exploratory');
    expect(plan.bounds.empirical_bernstein.half_width).toBeCloseTo(0.0465, 4);
    expect(plan.bounds.empirical_bernstein.min_effect_noninferior as number).toBeLessThan(0.0374);
    expect(plan.bounds.betting.role).toBe('exploratory');
    expect(Object.keys(plan.bounds.hoeffding.power)).toEqual(['0', '0.01', '0.03', '-0.03']);
    expect(plan.bounds.hoeffding.min_effect_superior).toBeNull(); // the spec has no superiority criterion
    expect(plan.cost.tokens.sampled).toBe(plan.cost.per_arm.grpo_gs8.tokens.sampled + plan.cost.per_arm.gs1_kernel.tokens.sampled + plan.cost.shared.tokens.sampled);
  });

  it('the example spec pre-registers empirical Bernstein: it is the verdict, Hoeffding exploratory', () => {
    const eb = buildPlan('gs1-vs-grpo-eb.json', specFile('gs1-vs-grpo-eb.json'), inputs);
    expect(eb.bound).toBe('empirical_bernstein');
    expect(Object.keys(eb.bounds)[0]).toBe('empirical_bernstein');
    expect(eb.bounds.hoeffding.role).toBe('exploratory');
    expect(formatPlan(eb).find((l) => l.includes('empirical Bernstein (pre-registered'))).toBeDefined();
  });

  it('a superiority criterion gets its own smallest effect', () => {
    const spec = specFile('gs1-vs-grpo.json');
    const sup = { ...spec, decision_rule: { ...spec.decision_rule, criteria: [...spec.decision_rule.criteria, { ...spec.decision_rule.criteria[0], id: 'superior', margin: 0 }] } };
    const p = buildPlan('x', sup, inputs);
    expect(p.bounds.hoeffding.min_effect_superior).toBeCloseTo(0.0674, 4);
  });

  it('holds the budget: wall by the timing, tokens and dollars only where capped, dollars only with a sourced price', () => {
    expect(plan.budget.within).toBe(true);
    expect(plan.cost.usd).toBeNull();
    expect(plan.cost.money_note).toMatch(/no price: .* no sourced entry for tinker Qwen\/Qwen3.5-2B; tokens only/);
    const spec = specFile('gs1-vs-grpo.json');
    const tight = buildPlan('x', { ...spec, budget: { ...spec.budget, max_wall_minutes: 10, max_tokens: 1000 } }, inputs);
    expect(tight.budget.within).toBe(false);
    expect(tight.budget.exceeded).toEqual([expect.stringMatching(/^wall \d+\.\d min of 10 min$/), `tokens 16039424 of 1000`]);
    const wall = planWall(spec, DEFAULT_TIMING.tinker);
    // fixed 30 + 5 pilot steps x 37 + 512 held-out items + 40 x 37 + 640 dev items + 3 x 1319 items at 26/1319 s
    expect(wall.seconds).toBeCloseTo(30 + 5 * 37 + 40 * 37 + (512 + 640 + 3957) * (26 / 1319), 9);
    const price: PriceEntry = { backend: 'tinker', base_model: 'Qwen/Qwen3.5-2B', usd_per_million: { prefill: 1, sample: 2, train: 3 }, source: 'test', date: '2026-12-04' };
    expect(priceFor('tinker', 'Qwen/Qwen3.5-2B', { entries: [price] })).toBe(price);
    const t = plan.cost.tokens;
    expect(planMoney({ ...plan.cost, total: { ...plan.cost.shared, tokens: t } }, price)).toBeCloseTo((t.prefill + 2 * t.sampled + 3 * t.trained) / 1e6, 9);
    const priced = buildPlan('x', { ...spec, budget: { ...spec.budget, max_usd: 1 } }, { ...inputs, prices: { entries: [price] } });
    expect(priced.budget.exceeded).toEqual([expect.stringMatching(/^USD \d+\.\d\d of 1$/)]);
  });
});
