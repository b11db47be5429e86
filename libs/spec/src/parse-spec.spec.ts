import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { formatJsonPath, loadSpecText, parseSpec } from './parse-spec';

const fixtureText = readFileSync(join(__dirname, 'fixtures', 'small-spec.json'), 'utf8');
// loose on purpose: the tests edit raw JSON, deep
type Json = Record<string, any>;
const fixture = (): Json => JSON.parse(fixtureText);

function errorsOf(edit: (s: Json) => void): string[] {
  const s = fixture();
  edit(s);
  const r = parseSpec(s);
  if (r.ok) throw new Error('expected the edited spec to be rejected');
  return r.errors;
}

describe('parseSpec', () => {
  it('accepts the fixture unchanged and returns it unchanged', () => {
    const r = parseSpec(fixture());
    expect(r).toEqual({ ok: true, spec: fixture() });
  });

  it.each<[string, (s: Json) => void, string]>([
    ['an unknown advantage kind', (s) => (s.arms[1].advantage = 'kernel'), 'arms[1].advantage: unknown advantage kind "kernel" (allowed: group_mean, kernel_cross_prompt_baseline)'],
    [
      'a treatment group size the gate does not allow',
      (s) => Object.assign(s.arms[1], { group_size: 2, groups_per_batch: 4 }),
      'arms[1].group_size: 2 is not in activation_gate.checks[0].one_of [1] (executed_group_size_treatment)',
    ],
    [
      'a baseline group size the gate does not allow',
      (s) => Object.assign(s.arms[0], { group_size: 8, groups_per_batch: 1 }),
      'arms[0].group_size: 8 is not in activation_gate.checks[1].one_of [4] (executed_group_size_baseline)',
    ],
    ['groups_per_batch * group_size != batch_size', (s) => (s.arms[0].groups_per_batch = 3), 'arms[0]: groups_per_batch * group_size = 3 * 4 = 12, not batch_size 8'],
    ['a gate with min > max', (s) => Object.assign(s.activation_gate.checks[2], { min: 0.9, max: 0.1 }), 'activation_gate.checks[2].min: min 0.9 is greater than max 0.1'],
    ['a missing decision rule', (s) => delete s.decision_rule, 'decision_rule: required: a spec must pre-register its decision rule'],
    ['a zero lr', (s) => (s.arms[0].lr = 0), 'arms[0].lr: must be > 0'],
    ['a negative optimizer lr', (s) => (s.optimizer.lr = -1e-4), 'optimizer.lr: must be > 0'],
    ['an arm lr that differs from the optimizer lr', (s) => (s.arms[1].lr = 0.002), 'arms[1].lr: 0.002 differs from optimizer.lr 0.001'],
    ['an unknown field', (s) => (s.arms[0].lr_schedule = 'cosine'), 'arms[0].lr_schedule: unknown field'],
    ['an unknown top-level field (a typo)', (s) => (s.batchsize = 8), 'batchsize: unknown field'],
    ['a missing required field', (s) => delete s.steps, 'steps: required field is missing'],
    ['a value of the wrong type', (s) => (s.steps = '3'), 'steps: Expected number, received string'],
    ['a fractional step count', (s) => (s.steps = 2.5), 'steps: must be an integer'],
    ['alpha outside (0, 1)', (s) => (s.decision_rule.alpha = 1.5), 'decision_rule.alpha: must be < 1'],
    ['another decision method', (s) => (s.decision_rule.method = 't_test'), 'decision_rule.method: Invalid literal value, expected "paired_hoeffding"'],
    ['an unknown bound', (s) => (s.decision_rule.bound = 'bonferroni'), 'decision_rule.bound: unknown bound "bonferroni" (allowed: hoeffding, empirical_bernstein, betting)'],
    ['the betting bound without its order seed', (s) => (s.decision_rule.bound = 'betting'), 'decision_rule.betting_order_seed: required with bound betting: the seed that fixes the order the bound takes the items in, pre-registered'],
    ['a token budget that is not a positive integer', (s) => (s.budget.max_tokens = 1.5), 'budget.max_tokens: must be an integer'],
    ['no primary criterion', (s) => (s.decision_rule.criteria[0].id = 'main'), "decision_rule.criteria: no criterion with id 'primary'"],
    ['inverted bounds', (s) => (s.decision_rule.criteria[0].bounds = [1, 0]), 'decision_rule.criteria[0].bounds: lower bound 1 must be below upper bound 0'],
    ['a margin outside the range of d', (s) => (s.decision_rule.criteria[0].margin = -2), 'decision_rule.criteria[0].margin: margin -2 must lie strictly inside (-2, 2), the range of the paired difference'],
    ['duplicate arm names', (s) => (s.arms[1].name = 'gm4'), "arms[1].name: duplicate arm name 'gm4'"],
    [
      'two group-mean arms',
      (s) => Object.assign(s.arms[1], { advantage: 'group_mean', group_size: 4, groups_per_batch: 2 }),
      'arms: needs exactly two arms, one kernel_cross_prompt_baseline (treatment) and one group_mean (baseline); got 2 arm(s), 0 kernel, 2 group-mean',
    ],
    ['too few prompts for the steps', (s) => (s.dataset.n_examples = 20), "dataset.n_examples: 20 prompts is fewer than arm 'kern1' draws (steps * groups_per_batch = 3 * 8 = 24)"],
    ['an effective config for another model', (s) => (s.feasibility.effective_config.base_model = 'other'), 'feasibility.effective_config.base_model: "other" differs from base_model "toy/char-model"'],
    ['an effective eval size that differs', (s) => (s.feasibility.effective_config.n_eval = 13), 'feasibility.effective_config.n_eval: 13 differs from eval.n_examples 12'],
    ['max_tokens that fill max_seq_len', (s) => (s.feasibility.effective_config.max_tokens = 64), 'feasibility.effective_config.max_tokens: 64 leaves no room for the prompt within max_seq_len 64'],
    ['an unknown gate metric', (s) => (s.activation_gate.checks[3].metric = 'kernel_mass'), 'activation_gate.checks[3].metric: unknown gate metric "kernel_mass" (allowed: executed_group_size_treatment, executed_group_size_baseline, pilot_mean_reward, kernel_effective_neighbors_p10, frac_nonzero_advantage_treatment, baseline_reward_corr)'],
    ['a duplicate gate metric', (s) => (s.activation_gate.checks[3].metric = 'pilot_mean_reward'), 'activation_gate.checks[3].metric: duplicate gate metric pilot_mean_reward (also checks[2])'],
    ['a group-size gate without one_of', (s) => delete s.activation_gate.checks[0].one_of, 'activation_gate.checks[0].one_of: executed_group_size_treatment needs one_of (the allowed group sizes)'],
    ['a non-integer group size in one_of', (s) => (s.activation_gate.checks[0].one_of = ['one']), 'activation_gate.checks[0].one_of[0]: must be a positive integer written as a string'],
    ['a scalar gate without bounds', (s) => delete s.activation_gate.checks[3].min, 'activation_gate.checks[3]: kernel_effective_neighbors_p10 needs a min or a max'],
    ['a gradient tolerance without min_cosine', (s) => delete s.correctness_preflight.paths[0].tolerances.baseline_gradient.min_cosine, 'correctness_preflight.paths[0].tolerances.baseline_gradient.min_cosine: required field is missing'],
  ])('rejects %s, naming the JSON path', (_what, edit, message) => {
    expect(errorsOf(edit)).toContain(message);
  });

  it('reports every field error of a spec at once', () => {
    const errors = errorsOf((s) => {
      s.arms[0].lr = 0;
      s.arms[1].advantage = 'ppo';
      delete s.decision_rule;
    });
    expect(errors).toEqual([
      'arms[0].lr: must be > 0',
      'arms[1].advantage: unknown advantage kind "ppo" (allowed: group_mean, kernel_cross_prompt_baseline)',
      'decision_rule: required: a spec must pre-register its decision rule',
    ]);
  });

  it('rejects a non-object', () => {
    expect(parseSpec(null)).toEqual({ ok: false, errors: ['$: Expected object, received null'] });
    expect(parseSpec([])).toEqual({ ok: false, errors: ['$: Expected object, received array'] });
  });
});

describe('loadSpecText', () => {
  it('parses JSON text (with or without a byte-order mark)', () => {
    expect(loadSpecText(fixtureText).ok).toBe(true);
    expect(loadSpecText('\uFEFF' + fixtureText).ok).toBe(true);
  });

  it('gives invalid JSON as one error line at $', () => {
    const r = loadSpecText('{\n  "title": }\n');
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.errors).toHaveLength(1);
    expect(r.errors[0]).toMatch(/^\$: invalid JSON: /);
    expect(r.errors[0]).not.toContain('\n');
  });

  it('never quotes the text it could not parse (a key file given by mistake stays unprinted)', () => {
    for (const text of ['TINKER_API_KEY=sk-secret', 'sk-secret', '{"a": sk-secret}', '{"a": 1']) {
      const r = loadSpecText(text);
      expect(r.ok).toBe(false);
      if (r.ok) return;
      expect(r.errors[0]).toMatch(/^\$: invalid JSON: (at (line|offset) |it ends early|not JSON)/);
      expect(r.errors[0]).not.toMatch(/sk-|secret|TINKER/);
    }
  });
});

describe('formatJsonPath', () => {
  it('writes dotted paths with indices', () => {
    expect(formatJsonPath([])).toBe('$');
    expect(formatJsonPath(['arms', 1, 'lr'])).toBe('arms[1].lr');
    expect(formatJsonPath(['experiment_features', 'odd key'])).toBe('experiment_features["odd key"]');
  });
});
