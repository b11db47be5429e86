// Before a resumed run starts its services: no worker of an earlier attempt may still consume the run's queues (it
// would take the new attempt's jobs with the old one's state). Its services end with their controller (their
// lifeline); this waits until Redis has seen the last of them go, and refuses the attempt if one stays.
import { setTimeout as sleep } from 'node:timers/promises';
import { QUEUE_NAME_LIST } from '@rx/contracts';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';

export class StaleConsumersError extends Error {
  override readonly name = 'StaleConsumersError';
}

/** the queues of the prefix with a consumer now, and how many each */
export async function consumersOf(redisUrl: string, prefix: string): Promise<Array<{ queue: string; workers: number }>> {
  const connection = new Redis(redisUrl, { maxRetriesPerRequest: 2 });
  connection.on('error', () => undefined);
  const queues = QUEUE_NAME_LIST.map((name) => new Queue(name, { connection, prefix }));
  try {
    const counts = await Promise.all(queues.map(async (q) => ({ queue: q.name, workers: (await q.getWorkers()).length })));
    return counts.filter((c) => c.workers > 0);
  } finally {
    await Promise.all(queues.map((q) => q.close()));
    await connection.quit().catch(() => connection.disconnect());
  }
}

/** Waits up to timeoutMs until no worker consumes a queue of the prefix; throws StaleConsumersError naming them. */
export async function waitForNoConsumers(redisUrl: string, prefix: string, timeoutMs: number, signal?: AbortSignal): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let left = await consumersOf(redisUrl, prefix);
  while (left.length > 0 && Date.now() < deadline) {
    await sleep(250, undefined, { signal });
    left = await consumersOf(redisUrl, prefix);
  }
  if (left.length > 0) {
    throw new StaleConsumersError(
      `workers of an earlier attempt still consume this run's queues (prefix ${prefix}: ${left.map((l) => `${l.queue} ${l.workers}`).join(', ')}) ${Math.round(timeoutMs / 1000)} s on; stop those processes, then rx run --resume again`,
    );
  }
}
