import type { RolloutAdvantage } from '@rx/estimators';
import { computeStepGateMetrics } from './step-gate-metrics';

const adv = (advantage: number, effectiveNeighbors: number, fallback = false): RolloutAdvantage => ({ rolloutId: 'x', baseline: 0, advantage, effectiveNeighbors, fallback, dropped: false });

describe('computeStepGateMetrics', () => {
  it('computes the per-step gate quantities of a small batch by hand', () => {
    const rollouts = [
      { promptId: 'a', reward: 1 },
      { promptId: 'a', reward: 0 },
      { promptId: 'b', reward: -0.1 },
      { promptId: 'b', reward: 0.9 },
      { promptId: 'c', reward: 1 },
    ];
    const advantages = [adv(0.5, 2), adv(-0.5, 4), adv(1e-7, 6), adv(-2e-6, 8, true), adv(0, 10)];
    const m = computeStepGateMetrics(rollouts, advantages);
    expect(m.executedGroupSize).toBeCloseTo(5 / 3, 15);
    expect(m.rewardMean).toBeCloseTo(2.8 / 5, 15);
    expect(m.fracNonzeroAdvantage).toBe(3 / 5); // 0.5, -0.5, -2e-6 exceed 1e-6; 1e-7 and 0 do not
    // numpy linear percentiles of [2, 4, 6, 8, 10]: p10 = 2 + 0.4 * 2, p50 = 6, p90 = 8 + 0.6 * 2
    expect(m.effectiveNeighbors.p10).toBeCloseTo(2.8, 12);
    expect(m.effectiveNeighbors.p50).toBe(6);
    expect(m.effectiveNeighbors.p90).toBeCloseTo(9.2, 12);
    expect(m.fallbackFraction).toBe(0.2);
  });

  it('GS1 batches execute group size 1, GRPO 8', () => {
    const gs1 = Array.from({ length: 64 }, (_, i) => ({ promptId: `p${i}`, reward: 0 }));
    const grpo = Array.from({ length: 64 }, (_, i) => ({ promptId: `p${i >> 3}`, reward: 0 }));
    const a = Array.from({ length: 64 }, () => adv(0, 7));
    expect(computeStepGateMetrics(gs1, a).executedGroupSize).toBe(1);
    expect(computeStepGateMetrics(grpo, a).executedGroupSize).toBe(8);
  });

  it('refuses a batch without one advantage per rollout', () => {
    expect(() => computeStepGateMetrics([{ promptId: 'a', reward: 1 }], [])).toThrow(/one advantage per rollout/);
  });
});
