import { RedisTrainerStepLedger } from './redis-trainer-step.ledger';
import { describeLedgerContract, stepCommit, stepRecord } from '@rx/pipeline/testing';
import { createRedisHarness } from '@rx/queue/testing';

const harness = createRedisHarness('ledger');
afterAll(() => harness.close());

let n = 0;
describeLedgerContract('RedisTrainerStepLedger', () => new RedisTrainerStepLedger(harness.redis(), `${harness.prefix}:c${n++}`));

describe('RedisTrainerStepLedger across connections', () => {
  it('a restarted trainer (new connection) sees the committed step and the claim left by a crash', async () => {
    const key = { runId: 'r', arm: 'grpo_gs8' };
    const before = new RedisTrainerStepLedger(harness.redis(), harness.prefix);
    await before.claim(key, 0, 'a', new Date());
    await before.commit(key, 0, 'a', stepCommit(0));
    await before.claim(key, 1, 'b', new Date());
    await before.markPhase(key, 1, 'b', 'optim_step');
    // crash here: step 1 may or may not have reached the optimizer
    const after = new RedisTrainerStepLedger(harness.redis(), harness.prefix);
    expect(await after.claim(key, 0, 'c', new Date())).toEqual({ kind: 'skipped', committed: 0, record: stepRecord(0) });
    expect(await after.claim(key, 1, 'c', new Date())).toMatchObject({ kind: 'in-doubt', committed: 0, claim: { step: 1, token: 'b', phase: 'optim_step' } });
    expect(await after.claim(key, 2, 'c', new Date())).toEqual({ kind: 'out-of-order', committed: 0 });
    // the restarted trainer takes the claim over and redoes step 1 from the state committed with step 0
    expect(await after.statePath(key, 0)).toBe('memory://state/0');
    expect(await after.takeOver(key, 1, 'c', 'b', new Date())).toBe(true);
    await expect(before.commit(key, 1, 'b', stepCommit(1))).rejects.toThrow(/no longer holds the claim/);
    await after.commit(key, 1, 'c', stepCommit(1));
    expect(await after.status(key)).toEqual({ committed: 1, claim: null, statePath: 'memory://state/1' });
    expect(await after.takeovers(key)).toBe(1);
  });
});
