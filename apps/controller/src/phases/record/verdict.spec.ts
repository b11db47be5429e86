import { verdictOf } from './verdict';
import type { DecisionSummary, PilotResult } from '@rx/run-dir';

const resolved = { required: true, status: 'resolved', resolved: true, unresolved: [] };
const decision = (outcome: DecisionSummary['outcome'], lower: number, upper: number): DecisionSummary => ({
  n: 1319,
  effect: (lower + upper) / 2,
  halfwidth: (upper - lower) / 2,
  lower,
  upper,
  wins_treatment: 10,
  wins_baseline: 12,
  supported: outcome === 'supported',
  outcome,
  rule: { method: 'paired_hoeffding', alpha: 0.05, criterionId: 'primary', metric: 'accuracy', bounds: [0, 1], margin: -0.03, weights: { treatment: 1, baseline: -1 } },
  treatment: { arm: 'gs1_kernel', file: 'gs1_kernel/eval.jsonl', sha256: 'x', accuracy: 0.4 },
  baseline: { arm: 'grpo_gs8', file: 'grpo_gs8/eval.jsonl', sha256: 'y', accuracy: 0.41 },
  evaluator_id: 'e',
  reproduce: '',
});

describe('verdictOf', () => {
  it('follows the decision rule and says why with the numbers', () => {
    const v = verdictOf({ status: 'complete', stopReason: null, decision: decision('inconclusive', -0.077, 0.057), pilot: null, specPreflight: resolved, reduced: false });
    expect(v.outcome).toBe('inconclusive');
    expect(v.reasoning[0]).toMatch(/interval \[-0\.0770, 0\.0570\] holds the margin -0\.03/);
    expect(verdictOf({ status: 'complete', stopReason: null, decision: decision('supported', -0.01, 0.1), pilot: null, specPreflight: resolved, reduced: false }).reasoning[0]).toMatch(/^Supported: .* -0\.0100 > margin -0\.03/);
    expect(verdictOf({ status: 'complete', stopReason: null, decision: decision('refuted', -0.2, -0.05), pilot: null, specPreflight: resolved, reduced: false }).outcome).toBe('refuted');
  });

  it('names the failed gate and its distance when the pilot stopped the run, and the caveats', () => {
    const pilot = {
      pass: false,
      pilots: [
        {
          bandwidth: 0.5,
          report: { applicable: true, pass: false, failed: ['kernel_effective_neighbors_p10'], results: [{ metric: 'kernel_effective_neighbors_p10', pass: false, failedBy: 2.5, detail: 'kernel_effective_neighbors_p10 = 5.5, needs >= 8; outside by 2.5' }] },
        },
      ],
    } as unknown as PilotResult;
    const v = verdictOf({
      status: 'stopped',
      stopReason: 'activation gate failed at bandwidth 1.0',
      decision: null,
      pilot,
      specPreflight: { required: true, status: 'unresolved', resolved: false, unresolved: ['correctness_preflight.status'] },
      reduced: true,
    });
    expect(v.outcome).toBe('stopped');
    expect(v.reasoning.join('\n')).toMatch(/kernel_effective_neighbors_p10 at bandwidth 0\.5: .*short by 2\.5/);
    expect(v.reasoning.join('\n')).toMatch(/No arm was trained/);
    expect(v.reasoning.join('\n')).toMatch(/reduced run/);
    expect(v.reasoning.join('\n')).toMatch(/correctness_preflight is marked unresolved/);
  });
});
