import type { StepRecord } from '@rx/contracts';
import type { RunResult } from './chaos-controller';
import { checkRun, compareRuns } from './run-comparison';

function record(runId: string, step: number, advantages: number[]): StepRecord {
  return {
    runId,
    arm: 'gs1_kernel',
    step,
    estimator: 'kernel_cross_prompt_baseline',
    rollouts: advantages.map((advantage, i) => ({
      rolloutId: `${step}-${i}`,
      promptId: `p${i}`,
      phi: [Math.log(20 + i), -1.5],
      completionTokens: 10 + i,
      reward: i % 2,
      correct: i % 2 === 1,
      formatOk: true,
      advantage,
      baseline: 0.5,
      effectiveNeighbors: 9,
      fallback: false,
      dropped: false,
    })),
    datums: advantages.length,
    loss: -0.25 * (step + 1),
    optimizerStep: step + 1,
    learningRate: 4e-5,
    gate: { executedGroupSize: 1, rewardMean: 0.5, fracNonzeroAdvantage: 1, effectiveNeighbors: { p10: 9, p50: 9, p90: 9 }, fallbackFraction: 0 },
    timings: { sample: 0.1 * (step + 1), train: 0.2 },
    samplerPath: `tinker://${runId}-session:train:0/sampler_weights/${step}`,
    committedAt: new Date(Date.UTC(2026, 7, 1, 0, step)).toISOString(),
  };
}

function result(runId: string, tweak: (r: RunResult) => void = () => undefined): RunResult {
  const r: RunResult = {
    runId,
    steps: 2,
    arms: {
      gs1_kernel: {
        records: [record(runId, 0, [0.5, -0.5, 0.25]), record(runId, 1, [0.1, -0.2, 0.3])],
        final: { statePath: `tinker://${runId}/weights/final`, weightsHash: 'a'.repeat(64) },
        evalSha256: 'e'.repeat(64),
      },
    },
    decision: { n: 16, effect: 0, halfwidth: 0.5, lower: -0.5, upper: 0.5, wins_treatment: 3, wins_baseline: 3, supported: false, outcome: 'inconclusive' },
  };
  tweak(r);
  return r;
}

describe('compareRuns', () => {
  it('finds nothing between runs that differ only in run id, paths and wall-clock fields', () => {
    const clean = result('r0');
    const other = result('r1', (r) => {
      r.arms.gs1_kernel.records[1].timings = { train: 9 };
      r.arms.gs1_kernel.records[1].committedAt = '2027-01-01T00:00:00.000Z';
    });
    expect(compareRuns(clean, other)).toEqual([]);
  });

  it('names the first field that differs in a step, the final weights, the eval file and the decision', () => {
    const clean = result('r0');
    const other = result('r1', (r) => {
      r.arms.gs1_kernel.records[1].rollouts[2].advantage = 0.30000000000000004;
      r.arms.gs1_kernel.final.weightsHash = 'b'.repeat(64);
      r.arms.gs1_kernel.evalSha256 = 'f'.repeat(64);
      r.decision.lower = -0.4;
    });
    expect(compareRuns(clean, other)).toEqual([
      'gs1_kernel step 1.rollouts.2.advantage: 0.30000000000000004 != 0.3',
      'gs1_kernel: final weights hash bbbbbbbbbbbb != aaaaaaaaaaaa',
      'gs1_kernel: eval.jsonl sha256 ffffffffffff != eeeeeeeeeeee',
      'decision.lower: -0.4 != -0.5',
    ]);
  });

  it('reports a missing step or arm', () => {
    const clean = result('r0');
    expect(compareRuns(clean, result('r1', (r) => r.arms.gs1_kernel.records.pop()))).toEqual(['gs1_kernel: 1 steps != 2', 'gs1_kernel step 1: missing']);
    expect(compareRuns(clean, result('r1', (r) => delete (r.arms as Record<string, unknown>).gs1_kernel))).toEqual(['gs1_kernel: missing']);
  });
});

describe('checkRun', () => {
  it('passes a run whose arm applied exactly `steps` optimizer steps, each rollout once', () => {
    expect(checkRun(result('r1'), { gs1_kernel: 2 })).toEqual([]);
  });

  it('catches an extra or a missing optimizer step on the backend side', () => {
    expect(checkRun(result('r1'), { gs1_kernel: 3 })).toEqual(["gs1_kernel: the backend's final state holds 3 optimizer steps, expected 2"]);
    expect(checkRun(result('r1'), { gs1_kernel: null })).toEqual(["gs1_kernel: the backend's final state holds no optimizer steps, expected 2"]);
  });

  it('catches a rollout trained in two steps, and datums that do not match the rollouts', () => {
    const dup = result('r1', (r) => {
      r.arms.gs1_kernel.records[1].rollouts[0].rolloutId = '0-1';
      r.arms.gs1_kernel.records[0].datums = 2;
      r.arms.gs1_kernel.records[1].optimizerStep = 3;
    });
    expect(checkRun(dup, { gs1_kernel: 2 })).toEqual([
      "gs1_kernel: the last record's optimizer step is 3, expected 2",
      'gs1_kernel: rollout 0-1 trained in two steps',
      'gs1_kernel step 0: 2 datums for 3 rollouts',
    ]);
  });
});
