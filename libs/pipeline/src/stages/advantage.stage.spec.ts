import { QUEUE_CATALOG, type GradedBatch } from '@rx/contracts';
import { appendToWindow, emptyWindow, groupMeanAdvantages, kernelBaseline } from '@rx/estimators';
import { InMemoryRolloutWindowStore, WindowGapError } from '../rollout-window.store';
import { UnrecoverableStageError } from '../stage-errors';
import { testStepRequest } from '@rx/pipeline/testing';
import { computeAdvantages, scoredRollouts } from './advantage.stage';

// a graded batch with rewards from {1, 0, -0.1, 0.9} and phi varying by prompt, deterministic in (arm, step)
function gradedBatch(arm: 'grpo_gs8' | 'gs1_kernel', step: number): GradedBatch {
  const req = testStepRequest('run-adv', arm, step);
  const g = req.plan.groupSize;
  const rewards = [1, 0, -0.1, 0.9];
  return {
    runId: req.runId,
    arm: req.arm,
    step,
    plan: req.plan,
    samplerPath: 'memory://w',
    prompts: req.prompts.map((p, i) => ({ promptId: p.promptId, tokens: [1, 2 + i] })),
    rollouts: req.prompts.flatMap((p, i) =>
      Array.from({ length: g }, (_, j) => {
        const k = i * g + j;
        const reward = rewards[(k * 7 + step * 3 + (k >> 3)) % 4];
        return { rolloutId: `${step}-${k}`, promptId: p.promptId, tokens: [5], logprobs: [-0.5], stopReason: 'stop' as const, phi: [Math.log(20 + i), -0.5 - ((i * 13) % 17) / 10] as [number, number], reward, correct: reward > 0.5, formatOk: reward >= 0 };
      }),
    ),
    timings: { sample: 1, grade: 0.5 },
  };
}

describe('computeAdvantages', () => {
  it('group_mean: the estimator on the batch rewards, 64 rollouts, gate metrics of the batch', async () => {
    const windows = new InMemoryRolloutWindowStore();
    const batch = gradedBatch('grpo_gs8', 0);
    const out = await computeAdvantages(batch, { windows });
    const expected = groupMeanAdvantages(scoredRollouts(batch));
    expect(out.rollouts).toHaveLength(64);
    expect(out.rollouts.map((r) => [r.rolloutId, r.advantage, r.baseline, r.effectiveNeighbors])).toEqual(expected.map((a) => [a.rolloutId, a.advantage, a.baseline, a.effectiveNeighbors]));
    expect(out.gate.executedGroupSize).toBe(8);
    expect(out.gate.effectiveNeighbors).toEqual({ p10: 7, p50: 7, p90: 7 });
    expect(out.gate.rewardMean).toBeCloseTo(batch.rollouts.reduce((s, r) => s + r.reward, 0) / 64, 15);
    expect(QUEUE_CATALOG['train-steps'].schema.safeParse(out).success).toBe(true);
    expect(out.timings).toMatchObject({ sample: 1, grade: 0.5 });
  });

  it('kernel: step 1 against the window after step 0, never against itself', async () => {
    const windows = new InMemoryRolloutWindowStore();
    const b0 = gradedBatch('gs1_kernel', 0);
    const b1 = gradedBatch('gs1_kernel', 1);
    const out0 = await computeAdvantages(b0, { windows });
    const out1 = await computeAdvantages(b1, { windows });
    const window0 = appendToWindow(emptyWindow(256), scoredRollouts(b0));
    expect(out0.rollouts.map((r) => r.advantage)).toEqual(kernelBaseline(scoredRollouts(b0), [], { bandwidth: 0.5, windowSize: 256 }).map((a) => a.advantage));
    expect(out1.rollouts.map((r) => r.advantage)).toEqual(kernelBaseline(scoredRollouts(b1), window0.rollouts, { bandwidth: 0.5, windowSize: 256 }).map((a) => a.advantage));
    expect(out1.gate.executedGroupSize).toBe(1);
    const latest = await windows.latest({ runId: b1.runId, arm: b1.arm });
    expect(latest?.step).toBe(1);
    expect(latest?.window.rollouts).toHaveLength(128);
  });

  it('a redelivered job computes the same advantages and leaves the window as one delivery does', async () => {
    const windows = new InMemoryRolloutWindowStore();
    const b0 = gradedBatch('gs1_kernel', 0);
    const b1 = gradedBatch('gs1_kernel', 1);
    await computeAdvantages(b0, { windows });
    const first = await computeAdvantages(b1, { windows });
    const replay = await computeAdvantages(b1, { windows });
    const replayOf0 = await computeAdvantages(b0, { windows });
    expect(replay.rollouts).toEqual(first.rollouts);
    expect(replayOf0.rollouts.length).toBe(64);
    const w = (await windows.latest({ runId: b1.runId, arm: b1.arm }))!.window;
    expect(new Set(w.rollouts.map((r) => r.rolloutId)).size).toBe(w.rollouts.length);
    expect(w.rollouts).toHaveLength(128);
  });

  it('refuses a step whose predecessor has no window', async () => {
    await expect(computeAdvantages(gradedBatch('gs1_kernel', 2), { windows: new InMemoryRolloutWindowStore() })).rejects.toBeInstanceOf(WindowGapError);
  });

  it('a replayed step computes from the same window and finds its batch stored; a different batch for a stored step is refused', async () => {
    const windows = new InMemoryRolloutWindowStore();
    const first = await computeAdvantages(gradedBatch('gs1_kernel', 0), { windows });
    const replay = await computeAdvantages(gradedBatch('gs1_kernel', 0), { windows });
    expect(replay.rollouts).toEqual(first.rollouts);
    const other = gradedBatch('gs1_kernel', 0);
    other.rollouts[5] = { ...other.rollouts[5], reward: other.rollouts[5].reward + 1 };
    await expect(computeAdvantages(other, { windows })).rejects.toBeInstanceOf(UnrecoverableStageError);
    await expect(computeAdvantages(other, { windows })).rejects.toThrow(/the window after step 0 of run-adv\/gs1_kernel already holds a different batch/);
    expect((await windows.latest({ runId: 'run-adv', arm: 'gs1_kernel' }))?.window.rollouts).toHaveLength(64);
  });
});
