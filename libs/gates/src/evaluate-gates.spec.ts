import { evaluateGates, formatGateNumber, formatGateReport, type ActivationGateSource } from './evaluate-gates';
import type { GateMetrics } from './gate-metrics';

// the bounds of the experiment's activation gate
const spec: ActivationGateSource = {
  activation_gate: {
    applicable: true,
    checks: [
      { metric: 'executed_group_size_treatment', one_of: ['1'] },
      { metric: 'executed_group_size_baseline', one_of: ['8'] },
      { metric: 'pilot_mean_reward', min: 0.1, max: 0.9 },
      { metric: 'kernel_effective_neighbors_p10', min: 8.0 },
      { metric: 'frac_nonzero_advantage_treatment', min: 0.5 },
      { metric: 'baseline_reward_corr', min: 0.1 },
    ],
  },
};

const good: GateMetrics = {
  executed_group_size_treatment: [1],
  executed_group_size_baseline: [8],
  pilot_mean_reward: 0.4,
  kernel_effective_neighbors_p10: 8,
  frac_nonzero_advantage_treatment: 0.9,
  baseline_reward_corr: 0.1,
  missing: {},
  counts: { treatmentRollouts: 128, baselineRollouts: 0, pilotSteps: [0, 1], corrPairs: 64, heldoutPrompts: 64, heldoutUnmatched: 0, heldoutSamplesPerPrompt: [8] },
};

describe('evaluateGates', () => {
  it('passes when every value meets its bound (bounds are inclusive)', () => {
    const report = evaluateGates(spec, good);
    expect(report.pass).toBe(true);
    expect(report.failed).toEqual([]);
    expect(report.results.map((r) => r.boundText)).toEqual(['in {1}', 'in {8}', 'in [0.1, 0.9]', '>= 8', '>= 0.5', '>= 0.1']);
    expect(report.results.every((r) => r.pass && r.failedBy === null)).toBe(true);
  });

  it('fails each gate that is out of bounds and says by how much', () => {
    const report = evaluateGates(spec, {
      ...good,
      executed_group_size_treatment: [1, 2],
      pilot_mean_reward: 0.95,
      kernel_effective_neighbors_p10: 5.5,
      baseline_reward_corr: null,
      missing: { baseline_reward_corr: 'the kernel baselines b_i are all equal (zero variance)' },
    });
    expect(report.pass).toBe(false);
    expect(report.failed).toEqual(['executed_group_size_treatment', 'pilot_mean_reward', 'kernel_effective_neighbors_p10', 'baseline_reward_corr']);
    const by = Object.fromEntries(report.results.map((r) => [r.metric, r]));
    expect(by.executed_group_size_treatment.offending).toEqual([2]);
    expect(by.executed_group_size_treatment.detail).toBe('executed_group_size_treatment = {1, 2}, needs in {1}; 2 not allowed');
    expect(by.pilot_mean_reward.failedBy).toBeCloseTo(0.05, 12);
    expect(by.kernel_effective_neighbors_p10.failedBy).toBe(2.5);
    expect(by.kernel_effective_neighbors_p10.value).toBe(5.5);
    expect(by.kernel_effective_neighbors_p10.bound).toEqual({ min: 8 });
    expect(by.baseline_reward_corr.detail).toMatch(/no value \(the kernel baselines b_i are all equal/);
    expect(by.frac_nonzero_advantage_treatment.pass).toBe(true);
    expect(formatGateReport(report)[0]).toBe('activation gate: FAIL (executed_group_size_treatment, pilot_mean_reward, kernel_effective_neighbors_p10, baseline_reward_corr)');
  });

  it('fails a set-valued gate with nothing logged', () => {
    const report = evaluateGates(spec, { ...good, executed_group_size_baseline: [], missing: { executed_group_size_baseline: "no logged rollouts of the baseline arm 'grpo'" } });
    expect(report.failed).toEqual(['executed_group_size_baseline']);
  });

  it('fails just below a min bound', () => {
    const report = evaluateGates(spec, { ...good, frac_nonzero_advantage_treatment: 0.49999 });
    expect(report.failed).toEqual(['frac_nonzero_advantage_treatment']);
    expect(report.results[4].failedBy).toBeCloseTo(0.00001, 12);
  });

  it('checks nothing when the gate is not applicable', () => {
    expect(evaluateGates({ activation_gate: { ...spec.activation_gate, applicable: false } }, good)).toEqual({ applicable: false, pass: true, results: [], failed: [] });
  });

  it('shows values to 4 significant digits in its lines and keeps the exact value in the result', () => {
    const report = evaluateGates(spec, { ...good, kernel_effective_neighbors_p10: 7.639411227, baseline_reward_corr: 0.41490000000000003 });
    const lines = formatGateReport(report);
    expect(lines).toContain('  FAIL kernel_effective_neighbors_p10 = 7.639, needs >= 8; outside by 0.3606');
    expect(lines).toContain('  pass baseline_reward_corr = 0.4149, needs >= 0.1');
    expect(report.results.find((r) => r.metric === 'kernel_effective_neighbors_p10')?.value).toBe(7.639411227);
    expect(formatGateNumber(28)).toBe('28');
  });
});
