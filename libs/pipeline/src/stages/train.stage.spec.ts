import { charRenderer, InMemoryPolicyBackend } from '@rx/backend';
import { QUEUE_CATALOG, type TrainStep } from '@rx/contracts';
import { gradeCompletion } from '@rx/grading';
import { InMemoryRolloutWindowStore } from '../rollout-window.store';
import { OutOfOrderStepError, UnrecoverableStageError } from '../stage-errors';
import { HashChainPolicyBackend } from '../testing/hash-chain-policy.backend';
import { testStepRequest } from '../testing/step-requests';
import { InMemoryTrainerStepLedger } from '../trainer-step.ledger';
import { TrainingClientPool } from '../training-client.pool';
import { computeAdvantages } from './advantage.stage';
import { gradeBatch } from './grade.stage';
import { prepareStep } from './prepare-step.stage';
import { sampleBatch } from './sample.stage';
import { adamParamsFor, datumsOf, trainStep } from './train.stage';

// a real train-steps payload of the hash-chain policy, through the real stages before train
async function trainPayload(backend: HashChainPolicyBackend, ledger: InMemoryTrainerStepLedger, trainers: TrainingClientPool, arm: 'grpo_gs8' | 'gs1_kernel', step: number, windows = new InMemoryRolloutWindowStore()): Promise<TrainStep> {
  const prepared = await prepareStep(testStepRequest('run-t', arm, step), { ledger, trainers });
  if (prepared.outcome !== 'ready') throw new Error('not ready');
  const sampled = await sampleBatch(prepared.sample, { backend, renderer: charRenderer, concurrency: 8 });
  return QUEUE_CATALOG['train-steps'].schema.parse(await computeAdvantages(gradeBatch(sampled, { renderer: charRenderer, grade: gradeCompletion }), { windows }));
}

function setup() {
  const backend = new HashChainPolicyBackend();
  const ledger = new InMemoryTrainerStepLedger();
  const trainers = new TrainingClientPool(backend);
  return { backend, ledger, trainers };
}

describe('trainStep', () => {
  it('sends one datum per rollout to forward_backward(importance_sampling), then AdamW(lr, 0.9, 0.95, 1e-8), and commits', async () => {
    const { backend, ledger, trainers } = setup();
    const payload = await trainPayload(backend, ledger, trainers, 'grpo_gs8', 0);
    const out = await trainStep(payload, { ledger, trainers, attemptToken: 'a' });
    expect(out.outcome).toBe('applied');
    expect(backend.calls.forwardBackward).toBe(1);
    expect(backend.calls.datums[0]).toHaveLength(64);
    expect(backend.calls.datums[0]).toEqual(datumsOf(payload));
    expect(backend.calls.adamParams).toEqual([{ learningRate: 4e-5, beta1: 0.9, beta2: 0.95, eps: 1e-8 }]);
    expect(adamParamsFor(1e-3)).toEqual({ learningRate: 1e-3, beta1: 0.9, beta2: 0.95, eps: 1e-8 });
    const record = out.record!;
    expect(record.rollouts).toHaveLength(64);
    expect(record.rollouts.map((r) => r.advantage)).toEqual(payload.rollouts.map((r) => r.advantage));
    expect(record.optimizerStep).toBe(1);
    // the hash-chain policy's loss at ratio 1 is -sum of the per-token advantages
    const expectedLoss = -backend.calls.datums[0].reduce((s, d) => s + d.advantages.reduce((a, b) => a + b, 0), 0);
    expect(record.loss).toBeCloseTo(expectedLoss, 9);
    expect(await ledger.status(payload)).toEqual({ committed: 0, claim: null });
  });

  it('a redelivered step is skipped with the stored record and never reaches the backend', async () => {
    const { backend, ledger, trainers } = setup();
    const payload = await trainPayload(backend, ledger, trainers, 'grpo_gs8', 0);
    const first = await trainStep(payload, { ledger, trainers, attemptToken: 'a' });
    const again = await trainStep(payload, { ledger, trainers, attemptToken: 'b' });
    expect(again).toEqual({ outcome: 'skipped', record: first.record });
    expect(backend.calls.forwardBackward).toBe(1);
    expect(backend.calls.optimStep).toBe(1);
  });

  it('a step that arrives before its predecessor is committed is retried later (out of order)', async () => {
    const { backend, ledger, trainers } = setup();
    const windows = new InMemoryRolloutWindowStore();
    const p0 = await trainPayload(backend, ledger, trainers, 'gs1_kernel', 0, windows);
    const p1 = { ...p0, step: 1, rollouts: p0.rollouts.map((r, i) => ({ ...r, rolloutId: `1-${i}` })) };
    await expect(trainStep(p1, { ledger, trainers, attemptToken: 'x' })).rejects.toBeInstanceOf(OutOfOrderStepError);
    expect(backend.calls.forwardBackward).toBe(0);
  });

  it('a forward_backward failure releases the step: the retry applies it exactly once', async () => {
    const { backend, ledger, trainers } = setup();
    const payload = await trainPayload(backend, ledger, trainers, 'grpo_gs8', 0);
    backend.failNext.forwardBackward = new Error('connection reset');
    await expect(trainStep(payload, { ledger, trainers, attemptToken: 'a' })).rejects.toThrow('connection reset');
    expect(await ledger.status(payload)).toEqual({ committed: -1, claim: null });
    const retry = await trainStep(payload, { ledger, trainers, attemptToken: 'b' });
    expect(retry.outcome).toBe('applied');
    expect(backend.calls.forwardBackward).toBe(2);
    expect(backend.calls.optimStep).toBe(1); // the failed attempt never reached the optimizer
  });

  it('a failure once optim_step began leaves the step in doubt: the retry refuses instead of applying twice', async () => {
    const { backend, ledger, trainers } = setup();
    const payload = await trainPayload(backend, ledger, trainers, 'grpo_gs8', 0);
    backend.failNext.optimStep = new Error('timeout after send');
    await expect(trainStep(payload, { ledger, trainers, attemptToken: 'a' })).rejects.toThrow('timeout after send');
    const retry = trainStep(payload, { ledger, trainers, attemptToken: 'b' });
    await expect(retry).rejects.toBeInstanceOf(UnrecoverableStageError);
    await expect(trainStep(payload, { ledger, trainers, attemptToken: 'c' })).rejects.toThrow(/step 0 of run-t\/grpo_gs8 is in doubt: .* \(phase optim_step\)/);
    expect(backend.calls.forwardBackward).toBe(1);
  });

  it('leaves dropped groups out of the datums', async () => {
    const { backend, ledger, trainers } = setup();
    const payload = await trainPayload(backend, ledger, trainers, 'grpo_gs8', 0);
    payload.rollouts.slice(0, 8).forEach((r) => (r.dropped = true));
    await trainStep(payload, { ledger, trainers, attemptToken: 'a' });
    expect(backend.calls.datums[0]).toHaveLength(56);
  });

  it('trains libs/backend InMemoryPolicyBackend (a real AdamW bigram) through the same stage', async () => {
    const backend = new InMemoryPolicyBackend({ vocabSize: 64 });
    const ledger = new InMemoryTrainerStepLedger();
    const trainers = new TrainingClientPool(backend);
    const req = testStepRequest('run-mem', 'grpo_gs8', 0);
    const lora = { ...req.lora, baseModel: 'rx-test/bigram' };
    const prepared = await prepareStep({ ...req, lora }, { ledger, trainers });
    if (prepared.outcome !== 'ready') throw new Error('not ready');
    const prompt = [1, 2, 3, 4];
    const client = await backend.createSamplingClient(prepared.sample.samplerPath);
    const seqs = await client.sample(prompt, 8, { maxTokens: 6, temperature: 1, seed: 3 });
    const payload: TrainStep = {
      runId: req.runId,
      arm: req.arm,
      step: 0,
      plan: { ...req.plan, groupSize: 8 },
      samplerPath: prepared.sample.samplerPath,
      prompts: [{ promptId: 'p', tokens: prompt }],
      rollouts: seqs.map((s, i) => ({
        rolloutId: `0-${i}`, promptId: 'p', tokens: s.tokens, logprobs: s.logprobs, stopReason: s.stopReason, phi: [1, -1],
        reward: i % 2, correct: i % 2 === 1, formatOk: true, advantage: (i % 2) - 0.5, baseline: 0.5, effectiveNeighbors: 7, fallback: false, dropped: false,
      })),
      gate: { executedGroupSize: 8, rewardMean: 0.5, fracNonzeroAdvantage: 1, effectiveNeighbors: { p10: 7, p50: 7, p90: 7 }, fallbackFraction: 0 },
      timings: {},
    };
    const out = await trainStep(payload, { ledger, trainers, attemptToken: 'a' });
    expect(out.outcome).toBe('applied');
    expect(out.record!.optimizerStep).toBe(1);
    expect(Number.isFinite(out.record!.loss)).toBe(true);
    // at ratio 1 the importance-sampling loss is -sum A over completion tokens
    const expected = -payload.rollouts.reduce((s, r) => s + r.advantage * r.tokens.length, 0);
    expect(out.record!.loss).toBeCloseTo(expected, 4);
  });
});
