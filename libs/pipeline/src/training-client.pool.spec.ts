import { UnrecoverableStageError } from './stage-errors';
import { HashChainPolicyBackend } from '@rx/backend/testing';
import { stepRecord } from '@rx/pipeline/testing';
import { InMemoryTrainerStepLedger } from './trainer-step.ledger';
import { TrainingClientPool } from './training-client.pool';

const key = { runId: 'run-p', arm: 'grpo_gs8' };
const lora = { baseModel: 'rx/char-lm', rank: 32, seed: 0 };
const datum = { inputTokens: [1, 2], targetTokens: [2, 3], samplingLogprobs: [0, -1], advantages: [0, 1] };
const adam = { learningRate: 1e-3, beta1: 0.9, beta2: 0.95, eps: 1e-8 };

async function committedArm() {
  const backend = new HashChainPolicyBackend();
  const ledger = new InMemoryTrainerStepLedger();
  await ledger.setOrigin(key, { lora, initStatePath: null });
  const pool = new TrainingClientPool(backend, ledger);
  const client = await pool.at(key, -1);
  await client.forwardBackward([datum], 'importance_sampling');
  await client.optimStep(adam);
  const state = await client.saveState('s0');
  await ledger.claim(key, 0, 't', new Date());
  await ledger.commit(key, 0, 't', { record: stepRecord(0), statePath: state });
  pool.advanced(key, client, 0);
  return { backend, ledger, pool, client, state };
}

describe('TrainingClientPool', () => {
  it('keeps the client that applied the last committed step', async () => {
    const { pool, client, backend } = await committedArm();
    expect(await pool.at(key, 0)).toBe(client);
    expect(backend.calls.createTrainingClient).toBe(1);
  });

  it('rebuilds an arm it does not hold from the state the ledger committed with the step (a restarted trainer)', async () => {
    const { backend, ledger, client } = await committedArm();
    const restarted = new TrainingClientPool(backend, ledger);
    const rebuilt = await restarted.at(key, 0);
    expect(rebuilt).not.toBe(client);
    expect(await rebuilt.saveWeightsForSampler('x')).toBe(await client.saveWeightsForSampler('y'));
    expect(restarted.stats).toEqual({ created: 1, restored: 1 });
  });

  it('discards a client that failed, and only that one: the next at() starts from the committed state again', async () => {
    const { pool, client } = await committedArm();
    // a failed attempt accumulated a gradient on the client (and its retry would add another): never used again
    await client.forwardBackward([datum], 'importance_sampling');
    await client.forwardBackward([datum], 'importance_sampling');
    pool.discard(key, { modelId: 'another client' } as never);
    expect(await pool.at(key, 0)).toBe(client);
    pool.discard(key, client);
    const fresh = await pool.at(key, 0);
    expect(fresh).not.toBe(client);
    await fresh.forwardBackward([datum], 'importance_sampling');
    await fresh.optimStep(adam);
    await client.optimStep(adam); // the discarded one applies its doubled gradient: another lineage
    expect(await fresh.saveWeightsForSampler('f')).not.toBe(await client.saveWeightsForSampler('c'));
  });

  it('asks for the state after the step it is told, not whatever it holds', async () => {
    const { pool, client } = await committedArm();
    const atOrigin = await pool.at(key, -1);
    expect(atOrigin).not.toBe(client);
    expect(await atOrigin.saveWeightsForSampler('o')).not.toBe(await client.saveWeightsForSampler('c'));
  });

  it('refuses an arm without an origin, or a committed step without a saved state, as unrecoverable', async () => {
    const ledger = new InMemoryTrainerStepLedger();
    const pool = new TrainingClientPool(new HashChainPolicyBackend(), ledger);
    await expect(pool.at(key, -1)).rejects.toBeInstanceOf(UnrecoverableStageError);
    await ledger.setOrigin(key, { lora, initStatePath: null });
    await expect(pool.at(key, 3)).rejects.toThrow('step 3 of run-p/grpo_gs8 was committed without a saved training state: the arm cannot be resumed');
    // a failed creation is not kept: the next call tries again
    await expect(pool.at(key, -1)).resolves.toBeDefined();
  });
});
