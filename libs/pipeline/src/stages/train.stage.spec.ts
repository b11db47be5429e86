import { charRenderer } from '@rx/backend';
import { InMemoryPolicyBackend, HashChainPolicyBackend } from '@rx/backend/testing';
import { QUEUE_CATALOG, type StepRecord, type TrainStep } from '@rx/contracts';
import { gradeCompletion } from '@rx/grading';
import { InMemoryRolloutWindowStore } from '../rollout-window.store';
import { OutOfOrderStepError } from '../stage-errors';
import { testStepRequest } from '@rx/pipeline/testing';
import { InMemoryTrainerStepLedger } from '../trainer-step.ledger';
import { TrainingClientPool } from '../training-client.pool';
import { computeAdvantages } from './advantage.stage';
import { gradeBatch } from './grade.stage';
import { prepareStep } from './prepare-step.stage';
import { sampleBatch } from './sample.stage';
import { adamParamsFor, ClaimContendedError, datumsOf, trainStep } from './train.stage';

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
  const trainers = new TrainingClientPool(backend, ledger);
  return { backend, ledger, trainers };
}

// what two runs must agree on: everything but wall-clock fields
const comparable = (r: StepRecord | null) => (r ? { ...r, committedAt: '', timings: {} } : null);

/** the optimizer steps a hash-chain state has on its lineage (its path: memory://hash-chain-state/<digest>/<steps>) */
const lineageSteps = (statePath: string | null) => Number(/\/(\d+)$/.exec(statePath ?? '')?.[1] ?? NaN);

/** `steps` steps of an arm; `crash(step, ctx)` may interfere before each train stage and return a new pool */
async function runArm(steps: number, crash?: (step: number, ctx: ReturnType<typeof setup>) => Promise<TrainingClientPool | void>) {
  const ctx = setup();
  const windows = new InMemoryRolloutWindowStore();
  const records: Array<StepRecord | null> = [];
  for (let step = 0; step < steps; step++) {
    const payload = await trainPayload(ctx.backend, ctx.ledger, ctx.trainers, 'gs1_kernel', step, windows);
    const replaced = await crash?.(step, ctx);
    if (replaced) ctx.trainers = replaced;
    const out = await trainStep(payload, { ledger: ctx.ledger, trainers: ctx.trainers, attemptToken: `live-${step}` });
    records.push(out.record);
  }
  const next = await prepareStep(testStepRequest('run-t', 'gs1_kernel', steps), { ledger: ctx.ledger, trainers: ctx.trainers });
  if (next.outcome !== 'ready') throw new Error('not ready');
  const status = await ctx.ledger.status({ runId: 'run-t', arm: 'gs1_kernel' });
  return { ...ctx, records: records.map(comparable), finalWeights: next.sample.samplerPath, status };
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
    // each completion's stop reason is logged (metrics.jsonl's clipped fraction is read from it)
    expect(record.rollouts.map((r) => r.stopReason)).toEqual(payload.rollouts.map((r) => r.stopReason));
    expect(record.rollouts.every((r) => r.stopReason !== undefined)).toBe(true);
    expect(record.optimizerStep).toBe(1);
    // the hash-chain policy's loss at ratio 1 is -sum of the per-token advantages
    const expectedLoss = -backend.calls.datums[0].reduce((s, d) => s + d.advantages.reduce((a, b) => a + b, 0), 0);
    expect(record.loss).toBeCloseTo(expectedLoss, 9);
    // the hash-chain policy's learner gives back the sampling logprobs: no sampler/learner KL; the entropy is minus
    // the mean sampling logprob over every completion token of the batch
    const completionLogprobs = payload.rollouts.flatMap((r) => r.logprobs);
    expect(record.logprobStats).toEqual({ klSampleTrainV1: 0, klSampleTrainV2: 0, entropy: expect.any(Number), tokens: completionLogprobs.length });
    expect(record.logprobStats!.entropy).toBeCloseTo(-completionLogprobs.reduce((a, b) => a + b, 0) / completionLogprobs.length, 6);
    // four completions kept whole, evenly spaced over the 64 rollouts
    expect(record.transcripts!.map((t) => t.rolloutId)).toEqual([0, 16, 32, 48].map((i) => payload.rollouts[i].rolloutId));
    expect(record.transcripts![1].tokens).toEqual(payload.rollouts[16].tokens);
    expect(await ledger.status(payload)).toMatchObject({ committed: 0, claim: null });
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
    expect(await ledger.status(payload)).toEqual({ committed: -1, claim: null, statePath: null });
    const retry = await trainStep(payload, { ledger, trainers, attemptToken: 'b' });
    expect(retry.outcome).toBe('applied');
    expect(backend.calls.forwardBackward).toBe(2);
    expect(backend.calls.optimStep).toBe(1); // the failed attempt never reached the optimizer
  });

  it('commits the state saved after optim_step with the step: one optimizer step per step on the lineage', async () => {
    const clean = await runArm(3);
    expect(clean.status).toMatchObject({ committed: 2, claim: null });
    expect(lineageSteps(clean.status.statePath)).toBe(3);
    expect(await clean.ledger.statePath({ runId: 'run-t', arm: 'gs1_kernel' }, 0)).toMatch(/^memory:\/\/hash-chain-state\/[0-9a-f]{64}\/1$/);
    expect(clean.backend.calls.optimStep).toBe(3);
    expect(clean.trainers.stats).toEqual({ created: 1, restored: 0 });
  });

  it('a failure after optim_step was applied leaves the step in doubt; the retry takes it over and redoes it from the state before', async () => {
    const clean = await runArm(2);
    // the first attempt of step 1 applies optim_step, then fails before it saved its state (a timeout, a lost connection)
    const ctx = setup();
    const windows = new InMemoryRolloutWindowStore();
    const p0 = await trainPayload(ctx.backend, ctx.ledger, ctx.trainers, 'gs1_kernel', 0, windows);
    await trainStep(p0, { ledger: ctx.ledger, trainers: ctx.trainers, attemptToken: 'a0' });
    const p1 = await trainPayload(ctx.backend, ctx.ledger, ctx.trainers, 'gs1_kernel', 1, windows);
    const doomed = await ctx.trainers.at({ runId: 'run-t', arm: 'gs1_kernel' }, 0);
    doomed.saveState = async () => Promise.reject(new Error('socket hang up'));
    await expect(trainStep(p1, { ledger: ctx.ledger, trainers: ctx.trainers, attemptToken: 'a1' })).rejects.toThrow('socket hang up');
    expect(await ctx.ledger.status(p1)).toMatchObject({ committed: 0, claim: { token: 'a1', phase: 'optim_step' } });
    const retry = await trainStep(p1, { ledger: ctx.ledger, trainers: ctx.trainers, attemptToken: 'a1-retry' });
    expect(retry).toMatchObject({ outcome: 'applied', tookOver: { token: 'a1', phase: 'optim_step' } });
    expect(ctx.backend.calls.optimStep).toBe(3); // one on the dead attempt's client, which is never used again
    const status = await ctx.ledger.status(p1);
    expect(lineageSteps(status.statePath)).toBe(2);
    expect(comparable(retry.record)).toEqual(clean.records[1]);
    const next = await prepareStep(testStepRequest('run-t', 'gs1_kernel', 2), { ledger: ctx.ledger, trainers: ctx.trainers });
    expect(next.outcome === 'ready' && next.sample.samplerPath).toBe(clean.finalWeights);
  });

  it('a trainer killed mid-step and restarted: the new one takes the claim over, redoes the step from the committed state, same result', async () => {
    const clean = await runArm(3);
    const restarted = await runArm(3, async (step, ctx) => {
      if (step !== 1) return;
      const key = { runId: 'run-t', arm: 'gs1_kernel' };
      // the old trainer claims step 1, runs forward_backward and optim_step on its client, and is killed
      const client = await ctx.trainers.at(key, 0);
      await ctx.ledger.claim(key, 1, 'killed', new Date());
      await client.forwardBackward([{ inputTokens: [1, 2], targetTokens: [2, 3], samplingLogprobs: [0, -1], advantages: [0, 1] }], 'importance_sampling');
      await ctx.ledger.markPhase(key, 1, 'killed', 'optim_step');
      await client.optimStep({ learningRate: 1, beta1: 0.9, beta2: 0.95, eps: 1e-8 });
      return new TrainingClientPool(ctx.backend, ctx.ledger); // the new process: no clients
    });
    expect(restarted.records).toEqual(clean.records);
    expect(restarted.finalWeights).toBe(clean.finalWeights);
    expect(lineageSteps(restarted.status.statePath)).toBe(3);
    expect(restarted.backend.calls.optimStep).toBe(4);
    expect(restarted.trainers.stats).toEqual({ created: 1, restored: 1 });
  });

  it('a take-over lost to a concurrent attempt is retried later, never applied twice', async () => {
    const { backend, ledger, trainers } = setup();
    const payload = await trainPayload(backend, ledger, trainers, 'grpo_gs8', 0);
    await ledger.claim(payload, 0, 'dead', new Date());
    const original = ledger.takeOver.bind(ledger);
    ledger.takeOver = async (key, step, token, held, now) => {
      await original(key, step, 'faster', held, now); // another attempt wins the compare-and-set first
      return original(key, step, token, held, now);
    };
    await expect(trainStep(payload, { ledger, trainers, attemptToken: 'slow' })).rejects.toBeInstanceOf(ClaimContendedError);
    expect(backend.calls.forwardBackward).toBe(0);
    expect((await ledger.status(payload)).claim?.token).toBe('faster');
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
    const trainers = new TrainingClientPool(backend, ledger);
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
