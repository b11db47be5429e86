import { executedGroupSizes, gateMetrics, type GateMetricsInput } from './gate-metrics';
import type { LoggedBatch, LoggedRollout } from './logged-batch';

const ro = (promptId: string, reward: number, advantage: number, baseline: number, effectiveNeighbors: number): LoggedRollout => ({ promptId, reward, advantage, baseline, effectiveNeighbors });

// GRPO: 2 prompts x 3 rollouts; GS1: one rollout per prompt
const grpo: LoggedBatch = {
  arm: 'grpo',
  step: 0,
  rollouts: ['a', 'a', 'a', 'b', 'b', 'b'].map((p, i) => ro(p, i % 2, 0, 0.5, 2)),
};
const gs1 = (step: number, rows: Array<[string, number, number, number, number]>): LoggedBatch => ({ arm: 'gs1', step, rollouts: rows.map((r) => ro(...r)) });

const batches: LoggedBatch[] = [
  // logged out of order: the pilot steps are the two smallest step numbers, 0 and 1
  gs1(2, [['q9', 1, 0.5, 0.5, 10], ['q10', 1, 0.5, 0.5, 9]]),
  gs1(0, [['q1', 1, 0.6, 0.4, 1], ['q2', 0, -0.3, 0.3, 2], ['q3', 0, 0, 0, 3], ['q4', 1, 0.0000005, 0.9999995, 4]]),
  gs1(1, [['q5', 1, 0.8, 0.2, 5], ['q6', 0, -0.1, 0.1, 6], ['q7', 1, 1e-6, 1, 7], ['q8', 0, -0.7, 0.7, 8]]),
  grpo,
];
const heldout = [
  // held-out means 0.25, 0.5, 0.75, 1 for q1, q2, q5, q8 (b = 0.4, 0.3, 0.2, 0.7)
  { promptId: 'q1', rewards: [1, 0, 0, 0] },
  { promptId: 'q2', rewards: [1, 1, 0, 0] },
  { promptId: 'q5', rewards: [1, 1, 1, 0] },
  { promptId: 'q8', rewards: [1, 1, 1, 1] },
  { promptId: 'never-sampled', rewards: [0, 1, 0, 1] },
];
const input: GateMetricsInput = { batches, treatmentArm: 'gs1', baselineArm: 'grpo', heldout, pilotSteps: 2 };

describe('executedGroupSizes', () => {
  it('is the set of rollouts-per-distinct-prompt counts over the batches', () => {
    expect(executedGroupSizes([grpo])).toEqual([3]);
    expect(executedGroupSizes(batches.filter((b) => b.arm === 'gs1'))).toEqual([1]);
    const uneven: LoggedBatch = { arm: 'gs1', step: 3, rollouts: [ro('x', 0, 0, 0, 1), ro('x', 0, 0, 0, 1), ro('y', 0, 0, 0, 1)] };
    expect(executedGroupSizes([...batches.filter((b) => b.arm === 'gs1'), uneven])).toEqual([1, 2]);
    // the same prompt in two batches is one rollout per prompt in each
    expect(executedGroupSizes([gs1(0, [['p', 0, 0, 0, 1]]), gs1(1, [['p', 0, 0, 0, 1]])])).toEqual([1]);
  });
});

describe('gateMetrics', () => {
  const m = gateMetrics(input);

  it('reads the executed group sizes from the logs', () => {
    expect(m.executed_group_size_treatment).toEqual([1]);
    expect(m.executed_group_size_baseline).toEqual([3]);
  });

  it('averages the reward over the first two treatment steps only', () => {
    // steps 0 and 1: rewards 1,0,0,1,1,0,1,0
    expect(m.counts.pilotSteps).toEqual([0, 1]);
    expect(m.pilot_mean_reward).toBe(0.5);
  });

  it('takes the 10th percentile of the effective neighbours over all treatment rollouts', () => {
    // 1..10, numpy: 1.9
    expect(m.kernel_effective_neighbors_p10).toBeCloseTo(1.9, 15);
  });

  it('counts |A| > 1e-6 as nonzero', () => {
    // nonzero: 0.6, -0.3, 0.8, -0.1, -0.7, 0.5, 0.5; zero: 0, 5e-7, 1e-6 (not above)
    expect(m.frac_nonzero_advantage_treatment).toBe(7 / 10);
  });

  it('correlates b_i with the held-out per-prompt mean reward', () => {
    // b = [0.4, 0.3, 0.2, 0.7], y = [0.25, 0.5, 0.75, 1]: sxy = 0.1, sxx = 0.14, syy = 0.3125
    expect(m.baseline_reward_corr).toBeCloseTo(0.1 / Math.sqrt(0.14 * 0.3125), 14);
    expect(m.counts.corrPairs).toBe(4);
    expect(m.counts.heldoutUnmatched).toBe(1);
    expect(m.counts.heldoutSamplesPerPrompt).toEqual([4]);
    expect(m.missing).toEqual({});
  });

  it('reports a constant kernel baseline as a missing correlation, not NaN', () => {
    const flat = batches.map((b) => ({ ...b, rollouts: b.rollouts.map((r) => ({ ...r, baseline: 0.5 })) }));
    const mm = gateMetrics({ ...input, batches: flat });
    expect(mm.baseline_reward_corr).toBeNull();
    expect(mm.missing.baseline_reward_corr).toMatch(/zero variance/);
  });

  it('has no values without treatment logs and says why', () => {
    const mm = gateMetrics({ ...input, batches: [grpo] });
    expect(mm.pilot_mean_reward).toBeNull();
    expect(mm.kernel_effective_neighbors_p10).toBeNull();
    expect(mm.frac_nonzero_advantage_treatment).toBeNull();
    expect(mm.executed_group_size_treatment).toEqual([]);
    expect(mm.missing.pilot_mean_reward).toMatch(/no logged rollouts of the treatment arm 'gs1'/);
    expect(mm.executed_group_size_baseline).toEqual([3]);
  });

  it('refuses non-finite logged values and bad held-out lists', () => {
    expect(() => gateMetrics({ ...input, batches: [gs1(0, [['q', 1, NaN, 0, 1]])] })).toThrow(/step 0 rollout 0: advantage is not finite/);
    expect(() => gateMetrics({ ...input, heldout: [{ promptId: 'q1', rewards: [] }] })).toThrow(/no rewards/);
    expect(() => gateMetrics({ ...input, heldout: [heldout[0], heldout[0]] })).toThrow(/twice/);
    expect(() => gateMetrics({ ...input, pilotSteps: 0 })).toThrow(/pilotSteps/);
  });
});
