import { HashChainPolicyBackend } from '../testing/hash-chain-policy.backend';
import { testStepRequest } from '../testing/step-requests';
import { OutOfOrderStepError, UnrecoverableStageError } from '../stage-errors';
import { InMemoryTrainerStepLedger } from '../trainer-step.ledger';
import { TrainingClientPool } from '../training-client.pool';
import { prepareStep } from './prepare-step.stage';
import { stepRecord } from '../testing/ledger.contract';

describe('prepareStep', () => {
  it('creates the arm client once, saves weights for sampling, and asks for the step with them', async () => {
    const backend = new HashChainPolicyBackend();
    const ledger = new InMemoryTrainerStepLedger();
    const trainers = new TrainingClientPool(backend);
    const req = testStepRequest('run-p', 'gs1_kernel', 0);
    const out = await prepareStep(req, { ledger, trainers });
    if (out.outcome !== 'ready') throw new Error('expected ready');
    expect(out.sample.samplerPath).toMatch(/^memory:\/\/hash-chain\/[0-9a-f]{64}$/);
    expect(out.sample.prompts).toEqual(req.prompts);
    expect(out.sample.plan).toEqual(req.plan);
    await prepareStep(req, { ledger, trainers });
    expect(backend.calls.createTrainingClient).toBe(1);
  });

  it('skips a step already committed or being trained, and defers one that comes early', async () => {
    const backend = new HashChainPolicyBackend();
    const ledger = new InMemoryTrainerStepLedger();
    const trainers = new TrainingClientPool(backend);
    const key = { runId: 'run-a', arm: 'grpo_gs8' };
    await prepareStep(testStepRequest(key.runId, 'grpo_gs8', 0), { ledger, trainers });
    await ledger.claim(key, 0, 't', new Date());
    expect(await prepareStep(testStepRequest(key.runId, 'grpo_gs8', 0), { ledger, trainers })).toEqual({ outcome: 'skipped', committed: -1 });
    await ledger.commit(key, 0, 't', stepRecord(0));
    expect(await prepareStep(testStepRequest(key.runId, 'grpo_gs8', 0), { ledger, trainers })).toEqual({ outcome: 'skipped', committed: 0 });
    await expect(prepareStep(testStepRequest(key.runId, 'grpo_gs8', 2), { ledger, trainers })).rejects.toBeInstanceOf(OutOfOrderStepError);
    expect((await prepareStep(testStepRequest(key.runId, 'grpo_gs8', 1), { ledger, trainers })).outcome).toBe('ready');
  });

  it('refuses to train fresh weights for an arm that already committed steps (trainer restarted mid-run)', async () => {
    const ledger = new InMemoryTrainerStepLedger();
    const key = { runId: 'run-a', arm: 'grpo_gs8' };
    await ledger.claim(key, 0, 't', new Date());
    await ledger.commit(key, 0, 't', stepRecord(0));
    const freshTrainer = new TrainingClientPool(new HashChainPolicyBackend());
    await expect(prepareStep(testStepRequest(key.runId, 'grpo_gs8', 1), { ledger, trainers: freshTrainer })).rejects.toBeInstanceOf(UnrecoverableStageError);
  });

  it('loads the shared initial state when the step request names one', async () => {
    const backend = new HashChainPolicyBackend();
    const init = await (await backend.createLoraTrainingClient({ baseModel: 'x', rank: 1, seed: 9 })).saveState('init');
    const trainers = new TrainingClientPool(backend);
    const out = await prepareStep({ ...testStepRequest('r', 'gs1_kernel', 0), initStatePath: init }, { ledger: new InMemoryTrainerStepLedger(), trainers });
    if (out.outcome !== 'ready') throw new Error('expected ready');
    expect(out.sample.samplerPath).toBe(`memory://hash-chain/${init.split('/')[3]}`);
  });
});
