import { RedisRolloutWindowStore } from './redis-rollout-window.store';
import { createRedisHarness } from '@rx/queue/testing';
import { describeWindowStoreContract, rollouts } from '@rx/pipeline/testing';
import { appendToWindow, emptyWindow } from '@rx/estimators';

const harness = createRedisHarness('window');
afterAll(() => harness.close());

let n = 0;
describeWindowStoreContract('RedisRolloutWindowStore', () => new RedisRolloutWindowStore(harness.redis(), `${harness.prefix}:c${n++}`));

describe('RedisRolloutWindowStore across connections', () => {
  it('a store on a fresh connection (a restarted service) reads the window the old one wrote', async () => {
    const key = { runId: 'r', arm: 'gs1_kernel' };
    const writer = new RedisRolloutWindowStore(harness.redis(), harness.prefix);
    const w = appendToWindow(emptyWindow(256), rollouts(0, 64));
    await writer.commitAfter(key, 0, w);
    const reader = new RedisRolloutWindowStore(harness.redis(), harness.prefix);
    expect(await reader.windowBefore(key, 1, 256)).toEqual(w);
    expect(await harness.keys('window:r:gs1_kernel:*')).toEqual(expect.arrayContaining([`${harness.prefix}:window:r:gs1_kernel:0`, `${harness.prefix}:window:r:gs1_kernel:latest`]));
  });

  it('concurrent commits of the same step store one window', async () => {
    const key = { runId: 'race', arm: 'gs1_kernel' };
    const stores = [0, 1, 2, 3].map(() => new RedisRolloutWindowStore(harness.redis(), harness.prefix));
    const results = await Promise.all(stores.map((s, i) => s.commitAfter(key, 0, appendToWindow(emptyWindow(8), rollouts(i, 3)))));
    for (const r of results) expect(r).toEqual(results[0]);
  });
});
