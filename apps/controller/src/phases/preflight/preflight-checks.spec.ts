import { buildDatum } from '@rx/pipeline';
import { loadSpecText, preflightTolerances } from '@rx/spec';
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { runBaselinePathCheck } from './baseline-path.check';
import { runEstimatorChecks } from './estimator-checks';
import { mulberry32 } from '@rx/stats';
import { stockDatum, stockGroupMeanAdvantages } from './stock-datum.reference';

const specText = readFileSync(path.resolve(__dirname, '../../../../../specs/embedded.json'), 'utf8');
const parsed = loadSpecText(specText);
if (!parsed.ok) throw new Error(parsed.errors.join('\n'));
const tolerances = preflightTolerances(parsed.spec)[0];

describe('preflight (a): the kernel estimator of the loop', () => {
  it('activates on heterogeneous phi and falls back to the leave-one-out mean at a huge bandwidth', async () => {
    const r = await runEstimatorChecks(0.5);
    expect(r.forced_activation.pass).toBe(true);
    expect(r.forced_activation.baseline_std).toBeGreaterThan(0.1);
    expect(r.forced_activation.baseline_mean_easy).toBeGreaterThan(0.6);
    expect(r.forced_activation.baseline_mean_hard).toBeLessThan(0.4);
    expect(r.forced_non_activation.pass).toBe(true);
    expect(r.forced_non_activation.max_abs_error).toBeLessThanOrEqual(1e-12);
    expect(r.pass).toBe(true);
  });

  it('a bandwidth so large the kernel cannot tell the kinds apart fails forced activation', async () => {
    const r = await runEstimatorChecks(1e6);
    expect(r.forced_activation.pass).toBe(false);
    expect(r.forced_activation.baseline_std).toBeLessThan(0.1);
  });
});

describe('preflight (b): the baseline path on the fixed GRPO batch', () => {
  it('matches the stock path and the float64 reference within the spec tolerances, with the numbers recorded', async () => {
    const r = await runBaselinePathCheck(tolerances);
    expect(r.rollouts).toBe(64);
    expect(r.action_tokens).toBeGreaterThan(64);
    expect(r.advantages_max_abs_error).toBeLessThanOrEqual(1e-12);
    expect(r.datums_equal).toBe(true);
    for (const k of ['baseline_loss', 'baseline_gradient', 'reference_loss', 'reference_gradient'] as const) {
      expect(r[k].pass).toBe(true);
      expect(r[k].max_abs_error).toBeLessThanOrEqual(1e-12);
      expect(r[k].cosine).toBeGreaterThan(0.999999999);
      expect(r[k].tolerance).toEqual(tolerances.tolerances[k]);
    }
    expect(r.fixed_batch_sha256).toMatch(/^[0-9a-f]{64}$/);
    // the fixed batch is fixed: the same hash on every run
    expect((await runBaselinePathCheck(tolerances)).fixed_batch_sha256).toBe(r.fixed_batch_sha256);
    expect(r.pass).toBe(true);
  });

  it('fails under a tolerance no float computation meets', async () => {
    const impossible = { ...tolerances, tolerances: { ...tolerances.tolerances, reference_gradient: { atol: 0, rtol: 0, min_cosine: 1.5 } } };
    const r = await runBaselinePathCheck(impossible);
    expect(r.reference_gradient.pass).toBe(false);
    expect(r.reference_gradient.failures.join()).toMatch(/cosine/);
    expect(r.pass).toBe(false);
  });
});

describe('the stock datum layout (cookbook) against the loop datum builder', () => {
  it('agrees on 200 random prompt/completion pairs', () => {
    const rand = mulberry32(7);
    for (let k = 0; k < 200; k++) {
      const p = Array.from({ length: 1 + Math.floor(rand() * 20) }, () => Math.floor(rand() * 60));
      const c = Array.from({ length: Math.floor(rand() * 20) }, () => Math.floor(rand() * 60));
      const l = c.map(() => -rand() * 4);
      const a = rand() - 0.5;
      expect(buildDatum(p, c, l, a)).toEqual(stockDatum(p, c, l, a));
    }
  });

  it('computes group-mean advantages by hand', () => {
    expect(stockGroupMeanAdvantages([1, 0, 1, 0.9, -0.1], ['a', 'a', 'a', 'b', 'b'])).toEqual([1 - 2 / 3, -2 / 3, 1 - 2 / 3, 0.5, -0.5]);
  });
});
