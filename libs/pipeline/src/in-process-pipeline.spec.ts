import { charRenderer } from '@rx/backend';
import { HashChainPolicyBackend } from '@rx/backend/testing';
import { appendToWindow, emptyWindow, groupMeanAdvantages, kernelBaseline, type ScoredRollout } from '@rx/estimators';
import { gradeCompletion } from '@rx/grading';
import type { StepRecord } from '@rx/contracts';
import { InProcessPipeline } from './in-process-pipeline';
import { testStepRequest } from '@rx/pipeline/testing';

const scored = (r: StepRecord): ScoredRollout[] => r.rollouts.map((x) => ({ rolloutId: x.rolloutId, step: r.step, promptId: x.promptId, reward: x.reward, phi: [x.phi[0], x.phi[1]] as const }));

function pipeline(backend = new HashChainPolicyBackend()) {
  return { backend, p: new InProcessPipeline({ backend, renderers: async () => charRenderer, grade: gradeCompletion, concurrency: 16 }) };
}

describe('InProcessPipeline', () => {
  it('runs two steps of both arms: 64 rollouts a step, advantages equal to the estimators on the same rewards', async () => {
    const { p, backend } = pipeline();
    const records: Record<string, StepRecord[]> = { grpo_gs8: [], gs1_kernel: [] };
    for (const step of [0, 1]) {
      const events = await Promise.all((['grpo_gs8', 'gs1_kernel'] as const).map((arm) => p.runStep(testStepRequest('run-ip', arm, step))));
      for (const e of events) {
        expect(e.outcome).toBe('applied');
        expect(e.record.rollouts).toHaveLength(64);
        expect(e.record.datums).toBe(64);
        records[e.arm].push(e.record);
      }
    }
    expect(backend.calls.optimStep).toBe(4);

    for (const r of records.grpo_gs8) {
      expect(r.rollouts.map((x) => x.advantage)).toEqual(groupMeanAdvantages(scored(r)).map((a) => a.advantage));
      expect(r.gate.executedGroupSize).toBe(8);
    }
    const [k0, k1] = records.gs1_kernel;
    const window0 = appendToWindow(emptyWindow(256), scored(k0));
    expect(k0.rollouts.map((x) => x.advantage)).toEqual(kernelBaseline(scored(k0), [], { bandwidth: 0.5 }).map((a) => a.advantage));
    expect(k1.rollouts.map((x) => x.advantage)).toEqual(kernelBaseline(scored(k1), window0.rollouts, { bandwidth: 0.5 }).map((a) => a.advantage));
    expect(k1.gate.executedGroupSize).toBe(1);

    // the test policy gives varied rewards (right 1, wrong 0, unboxed or truncated -0.1), so these checks are not of
    // all-zero advantages
    const rewards = new Set([...records.grpo_gs8, ...records.gs1_kernel].flatMap((r) => r.rollouts.map((x) => x.reward)));
    expect([...rewards].sort()).toEqual([-0.1, 0, 1].sort());
    expect(records.grpo_gs8[0].gate.fracNonzeroAdvantage).toBeGreaterThan(0.3);
  });

  it('is deterministic: a second pipeline fed the same requests produces the same records', async () => {
    const run = async () => {
      const { p } = pipeline();
      const out: StepRecord[] = [];
      for (const step of [0, 1]) out.push((await p.runStep(testStepRequest('run-det', 'gs1_kernel', step))).record);
      return out.map((r) => ({ ...r, committedAt: '', timings: {} }));
    };
    expect(await run()).toEqual(await run());
  });

  it('answers a repeated step with its record, applying nothing', async () => {
    const { p, backend } = pipeline();
    const first = await p.runStep(testStepRequest('run-rep', 'grpo_gs8', 0));
    const again = await p.runStep(testStepRequest('run-rep', 'grpo_gs8', 0));
    expect(again.outcome).toBe('skipped');
    expect(again.record).toEqual(first.record);
    expect(backend.calls.optimStep).toBe(1);
  });
});
