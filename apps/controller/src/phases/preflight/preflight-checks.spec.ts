import { buildDatum } from '@rx/pipeline';
import { runEstimatorChecks } from './estimator-checks';
import { mulberry32 } from '@rx/stats';
import { stockDatum, stockGroupMeanAdvantages } from './stock-datum.reference';

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
