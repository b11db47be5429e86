import { RedisTrainerStepLedger } from './redis-trainer-step.ledger';
import { describeLedgerContract, stepRecord } from './testing/ledger.contract';
import { createRedisHarness } from './testing/redis-test-harness';

const harness = createRedisHarness('ledger');
afterAll(() => harness.close());

let n = 0;
describeLedgerContract('RedisTrainerStepLedger', () => new RedisTrainerStepLedger(harness.redis(), `${harness.prefix}:c${n++}`));

describe('RedisTrainerStepLedger across connections', () => {
  it('a restarted trainer (new connection) sees the committed step and the claim left by a crash', async () => {
    const key = { runId: 'r', arm: 'grpo_gs8' };
    const before = new RedisTrainerStepLedger(harness.redis(), harness.prefix);
    await before.claim(key, 0, 'a', new Date());
    await before.commit(key, 0, 'a', stepRecord(0));
    await before.claim(key, 1, 'b', new Date());
    await before.markPhase(key, 1, 'b', 'optim_step');
    // crash here: step 1 may or may not have reached the optimizer
    const after = new RedisTrainerStepLedger(harness.redis(), harness.prefix);
    expect(await after.claim(key, 0, 'c', new Date())).toEqual({ kind: 'skipped', committed: 0, record: stepRecord(0) });
    expect(await after.claim(key, 1, 'c', new Date())).toMatchObject({ kind: 'in-doubt', committed: 0, claim: { step: 1, token: 'b', phase: 'optim_step' } });
    expect(await after.claim(key, 2, 'c', new Date())).toEqual({ kind: 'out-of-order', committed: 0 });
  });
});
