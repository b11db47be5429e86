import { HashChainPolicyBackend } from '@rx/backend/testing';
import { stepRecord, testStepRequest } from '@rx/pipeline/testing';
import { OutOfOrderStepError, UnrecoverableStageError } from '../stage-errors';
import { InMemoryTrainerStepLedger } from '../trainer-step.ledger';
import { TrainingClientPool } from '../training-client.pool';
import { prepareStep } from './prepare-step.stage';

function setup(backend = new HashChainPolicyBackend(), ledger = new InMemoryTrainerStepLedger()) {
  return { backend, ledger, trainers: new TrainingClientPool(backend, ledger) };
}

describe('prepareStep', () => {
  it('creates the arm client once, records the arm origin, saves weights for sampling, and asks for the step with them', async () => {
    const { backend, ledger, trainers } = setup();
    const req = testStepRequest('run-p', 'gs1_kernel', 0);
    const out = await prepareStep(req, { ledger, trainers });
    if (out.outcome !== 'ready') throw new Error('expected ready');
    expect(out.sample.samplerPath).toMatch(/^memory:\/\/hash-chain\/[0-9a-f]{64}$/);
    expect(out.sample.prompts).toEqual(req.prompts);
    expect(out.sample.plan).toEqual(req.plan);
    expect(await ledger.origin(req)).toEqual({ lora: req.lora, initStatePath: null });
    await prepareStep(req, { ledger, trainers });
    expect(backend.calls.createTrainingClient).toBe(1);
  });

  it('skips a step already committed or being trained, and defers one that comes early', async () => {
    const { backend, ledger, trainers } = setup();
    const key = { runId: 'run-a', arm: 'grpo_gs8' };
    await prepareStep(testStepRequest(key.runId, 'grpo_gs8', 0), { ledger, trainers });
    await ledger.claim(key, 0, 't', new Date());
    expect(await prepareStep(testStepRequest(key.runId, 'grpo_gs8', 0), { ledger, trainers })).toEqual({ outcome: 'skipped', committed: -1 });
    const state = await (await backend.createLoraTrainingClient(testStepRequest(key.runId, 'grpo_gs8', 0).lora)).saveState('s0');
    await ledger.commit(key, 0, 't', { record: stepRecord(0), statePath: state });
    expect(await prepareStep(testStepRequest(key.runId, 'grpo_gs8', 0), { ledger, trainers })).toEqual({ outcome: 'skipped', committed: 0 });
    await expect(prepareStep(testStepRequest(key.runId, 'grpo_gs8', 2), { ledger, trainers })).rejects.toBeInstanceOf(OutOfOrderStepError);
    expect((await prepareStep(testStepRequest(key.runId, 'grpo_gs8', 1), { ledger, trainers })).outcome).toBe('ready');
  });

  it('a restarted trainer (empty pool) prepares step N from the state committed with N - 1: the same sampler weights', async () => {
    const backend = new HashChainPolicyBackend();
    const ledger = new InMemoryTrainerStepLedger();
    const key = { runId: 'run-r', arm: 'grpo_gs8' };
    const before = new TrainingClientPool(backend, ledger);
    await prepareStep(testStepRequest(key.runId, 'grpo_gs8', 0), { ledger, trainers: before });
    // the live trainer applies step 0 on its client and commits the state it saved
    const client = await before.at(key, -1);
    await client.forwardBackward([{ inputTokens: [1, 2], targetTokens: [2, 3], samplingLogprobs: [0, -1], advantages: [0, 0.5] }], 'importance_sampling');
    await client.optimStep({ learningRate: 4e-5, beta1: 0.9, beta2: 0.95, eps: 1e-8 });
    const state = await client.saveState('after-0');
    await ledger.claim(key, 0, 't', new Date());
    await ledger.commit(key, 0, 't', { record: stepRecord(0), statePath: state });
    before.advanced(key, client, 0);

    const live = await prepareStep(testStepRequest(key.runId, 'grpo_gs8', 1), { ledger, trainers: before });
    const restarted = new TrainingClientPool(backend, ledger);
    const again = await prepareStep(testStepRequest(key.runId, 'grpo_gs8', 1), { ledger, trainers: restarted });
    if (live.outcome !== 'ready' || again.outcome !== 'ready') throw new Error('expected ready');
    expect(again.sample.samplerPath).toBe(live.sample.samplerPath);
    expect(restarted.stats).toEqual({ created: 1, restored: 1 });
  });

  it('refuses a step request whose LoRA config or initial state differs from the arm origin', async () => {
    const { ledger, trainers } = setup();
    const req = testStepRequest('run-o', 'grpo_gs8', 0);
    await prepareStep(req, { ledger, trainers });
    const changed = { ...req, lora: { ...req.lora, rank: 8 } };
    await expect(prepareStep(changed, { ledger, trainers })).rejects.toBeInstanceOf(UnrecoverableStageError);
    await expect(prepareStep({ ...req, initStatePath: 'memory://other' }, { ledger, trainers })).rejects.toThrow(/an arm keeps its origin/);
  });

  it('loads the shared initial state when the step request names one', async () => {
    const { backend, ledger, trainers } = setup();
    const init = await (await backend.createLoraTrainingClient({ baseModel: 'x', rank: 1, seed: 9 })).saveState('init');
    const out = await prepareStep({ ...testStepRequest('r', 'gs1_kernel', 0), initStatePath: init }, { ledger, trainers });
    if (out.outcome !== 'ready') throw new Error('expected ready');
    expect(out.sample.samplerPath).toBe(`memory://hash-chain/${init.split('/')[3]}`);
  });

  it('discards the client when saving the weights fails (a restarted backend forgot it): the retry builds a new one', async () => {
    const { backend, ledger, trainers } = setup();
    const req = testStepRequest('run-f', 'grpo_gs8', 0);
    const key = { runId: req.runId, arm: req.arm };
    const first = await trainers.at(key, -1).catch(() => null);
    expect(first).toBeNull(); // no origin yet: nothing to build from
    await ledger.setOrigin(key, { lora: req.lora, initStatePath: null });
    const client = await trainers.at(key, -1);
    const broken = Object.assign(client, { saveWeightsForSampler: async () => Promise.reject(new Error('unknown model_id')) });
    await expect(prepareStep(req, { ledger, trainers })).rejects.toThrow('unknown model_id');
    const retried = await prepareStep(req, { ledger, trainers });
    expect(retried.outcome).toBe('ready');
    expect(await trainers.at(key, -1)).not.toBe(broken);
    expect(backend.calls.createTrainingClient).toBe(2);
  });
});
