import { batchSignals, populationStd } from './batch-signals';
import type { SignalRollout } from './signal-rollout';

// GRPO-like step, 4 prompts x 4 rollouts, reward = 0.1 (format - 1) + correct:
//   p1 all correct, well formed        rewards 1 1 1 1          constant, all good, all correct
//   p2 all wrong, well formed          rewards 0 0 0 0          constant, all bad, all wrong
//   p3 two right, two wrong            rewards 1 0 0.9 -0.1     mixed
//   p4 all correct, one badly formed   rewards 1 1 0.9 1        mixed (cookbook), all correct (rx)
// one completion of p3 was cut at max_tokens = 64
const roll = (promptId: string, reward: number, correct: boolean, completionTokens: number, stopReason: 'stop' | 'length' = 'stop', baseline = 0): SignalRollout => ({ promptId, reward, correct, completionTokens, stopReason, baseline });
const grpo: SignalRollout[] = [
  roll('p1', 1, true, 10), roll('p1', 1, true, 12), roll('p1', 1, true, 14), roll('p1', 1, true, 16),
  roll('p2', 0, false, 20), roll('p2', 0, false, 20), roll('p2', 0, false, 20), roll('p2', 0, false, 20),
  roll('p3', 1, true, 30), roll('p3', 0, false, 64, 'length'), roll('p3', 0.9, true, 30), roll('p3', -0.1, false, 30),
  roll('p4', 1, true, 40), roll('p4', 1, true, 40), roll('p4', 0.9, true, 40), roll('p4', 1, true, 40),
];

describe('batchSignals of a group-mean step', () => {
  const s = batchSignals(grpo, 'group_mean');

  it('counts the groups by how their rewards spread (2 of 4 constant: 1 all good, 1 all bad)', () => {
    expect(s.fracRewardZeroStd).toBe(0.5);
    expect(s.groups).toEqual({ mixed: 0.5, allGood: 0.25, allBad: 0.25, allCorrect: 0.5, allWrong: 0.25 });
  });

  it('gives the clipped fraction, the mean and the longest completion', () => {
    // 1 of 16 cut; tokens 10+12+14+16 + 4*20 + 30+64+30+30 + 4*40 = 52 + 80 + 154 + 160 = 446
    expect(s.lengths).toEqual({ clippedFraction: 1 / 16, mean: 446 / 16, max: 64 });
  });

  it('gives the population standard deviation of the rewards', () => {
    // sum 9.7, sum of squares 9.63, n 16: var = 9.63/16 - (9.7/16)^2 = 0.2343359375
    expect(s.rewardStd).toBeCloseTo(Math.sqrt(0.2343359375), 14);
  });

  it('reads the reward, not the baseline, of a group-mean arm', () => {
    const shifted = grpo.map((r) => ({ ...r, baseline: r.reward }));
    expect(batchSignals(shifted, 'group_mean').fracRewardZeroStd).toBe(0.5);
  });
});

describe('batchSignals of a kernel-baseline (GS1) step, one rollout per prompt', () => {
  // zero spread for GS1: |b_i - r_i| <= 1e-12
  const gs1: SignalRollout[] = [
    roll('q1', 1, true, 5, 'stop', 1),
    roll('q2', 0, false, 64, 'length', 1e-13),
    roll('q3', 0, false, 7, 'stop', 0.3),
    roll('q4', 0.9, true, 9, 'stop', 0.9 + 1e-9),
  ];
  const s = batchSignals(gs1, 'kernel_cross_prompt_baseline');

  it('counts the rollouts whose kernel baseline equals their reward within 1e-12', () => {
    expect(s.fracRewardZeroStd).toBe(0.5);
  });

  it('sees every one-rollout group as constant, as the cookbook would', () => {
    expect(s.groups).toEqual({ mixed: 0, allGood: 0.5, allBad: 0.5, allCorrect: 0.5, allWrong: 0.5 });
  });

  it('gives the lengths and the clipped fraction', () => {
    expect(s.lengths).toEqual({ clippedFraction: 0.25, mean: 85 / 4, max: 64 });
  });
});

describe('edge cases', () => {
  it('gives no clipped fraction when a stop reason was not logged', () => {
    const old = grpo.map(({ stopReason: _, ...r }) => r);
    expect(batchSignals(old, 'group_mean').lengths.clippedFraction).toBeNull();
  });

  it('gives zeros for an empty batch, as the cookbook does for no group', () => {
    expect(batchSignals([], 'group_mean')).toEqual({ fracRewardZeroStd: 0, groups: { mixed: 0, allGood: 0, allBad: 0, allCorrect: 0, allWrong: 0 }, lengths: { clippedFraction: 0, mean: 0, max: 0 }, rewardStd: 0 });
    expect(batchSignals([], 'kernel_cross_prompt_baseline').fracRewardZeroStd).toBe(0);
  });

  it('takes a spread of 1e-12 as zero and 1e-9 as not', () => {
    const g = [roll('p', 0.5, true, 1), roll('p', 0.5 + 1e-13, true, 1), roll('x', 0.5, true, 1), roll('x', 0.5 + 1e-9, true, 1)];
    expect(batchSignals(g, 'group_mean').fracRewardZeroStd).toBe(0.5);
  });

  it('population standard deviation: divides by n', () => {
    expect(populationStd([1, 3])).toBe(1);
    expect(populationStd([2, 2, 2])).toBe(0);
  });
});
