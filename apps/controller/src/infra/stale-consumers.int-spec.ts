// The resume's guard against workers of an earlier attempt, on a real Redis with real BullMQ workers: a worker that
// still consumes one of the run's queues makes the attempt wait, then refuses it in one line naming the queue; a
// worker of another run (another prefix) does not count; once the stale worker closes, the wait ends.
import { randomUUID } from 'node:crypto';
import { QUEUE_NAME_LIST } from '@rx/contracts';
import { Worker } from 'bullmq';
import { Redis } from 'ioredis';
import { consumersOf, StaleConsumersError, waitForNoConsumers } from './stale-consumers';
import { deletePrefixKeys } from './step-bus';

jest.setTimeout(60_000);

const url = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

describe('waitForNoConsumers', () => {
  const prefixes: string[] = [];
  const workers: Worker[] = [];
  const connections: Redis[] = [];

  function worker(prefix: string, queue: string): Worker {
    const connection = new Redis(url, { maxRetriesPerRequest: null });
    connections.push(connection);
    const w = new Worker(queue, async () => undefined, { connection, prefix, autorun: true });
    workers.push(w);
    return w;
  }

  function newPrefix(): string {
    const p = `rx-test-stale-${randomUUID().slice(0, 8)}`;
    prefixes.push(p);
    return p;
  }

  afterAll(async () => {
    await Promise.all(workers.map((w) => w.close().catch(() => undefined)));
    await Promise.all(connections.map((c) => c.quit().catch(() => c.disconnect())));
    for (const p of prefixes) await deletePrefixKeys(url, p);
  });

  it('passes at once when nothing consumes the run queues, even while another run has workers', async () => {
    const run = newPrefix();
    const other = newPrefix();
    const w = worker(other, QUEUE_NAME_LIST[0]);
    await w.waitUntilReady();
    await waitUntil(async () => (await consumersOf(url, other)).length === 1);
    expect(await consumersOf(url, run)).toEqual([]);
    await expect(waitForNoConsumers(url, run, 1_000)).resolves.toBeUndefined();
  });

  it('refuses the attempt, naming the queue, when a stale worker still consumes it', async () => {
    const run = newPrefix();
    const queue = QUEUE_NAME_LIST[QUEUE_NAME_LIST.length - 1];
    const w = worker(run, queue);
    await w.waitUntilReady();
    await waitUntil(async () => (await consumersOf(url, run)).length === 1);
    expect(await consumersOf(url, run)).toEqual([{ queue, workers: 1 }]);
    const refused = waitForNoConsumers(url, run, 1_500);
    await expect(refused).rejects.toBeInstanceOf(StaleConsumersError);
    await expect(refused).rejects.toThrow(new RegExp(`^workers of an earlier attempt still consume this run's queues \\(prefix ${run}: ${queue} 1\\) 2 s on; stop those processes, then rx run --resume again$`));
  });

  it('waits for a stale worker that goes within the time, then lets the attempt start', async () => {
    const run = newPrefix();
    const w = worker(run, QUEUE_NAME_LIST[0]);
    await w.waitUntilReady();
    await waitUntil(async () => (await consumersOf(url, run)).length === 1);
    const waited = waitForNoConsumers(url, run, 20_000);
    let settled = false;
    void waited.then(
      () => (settled = true),
      () => (settled = true),
    );
    await new Promise((r) => setTimeout(r, 600));
    expect(settled).toBe(false); // still waiting while the worker consumes
    await w.close();
    await expect(waited).resolves.toBeUndefined();
  });
});

async function waitUntil(done: () => Promise<boolean>, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await done())) {
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 100));
  }
}
