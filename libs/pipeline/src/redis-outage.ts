// Work that touches Redis, run again while Redis is away (a restart, a failover): the failure is not the work's,
// so it waits with back-off (250 ms doubling to 4 s) for up to `budgetMs` in all, then lets the last error through.
import { isRedisUnavailable } from './stage-errors';

export interface RedisOutageOptions {
  /** how long to wait, in all, for Redis to come back (default 60 s) */
  budgetMs?: number;
  sleep?: (ms: number) => Promise<void>;
}

const sleepFor = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms).unref());

export async function throughRedisOutages<T>(work: () => Promise<T>, opts: RedisOutageOptions = {}): Promise<T> {
  const sleep = opts.sleep ?? sleepFor;
  const budgetMs = opts.budgetMs ?? 60_000;
  let waitedMs = 0;
  for (let pauseMs = 250; ; pauseMs = Math.min(pauseMs * 2, 4000)) {
    try {
      return await work();
    } catch (err) {
      if (!isRedisUnavailable(err) || waitedMs >= budgetMs) throw err;
      await sleep(pauseMs);
      waitedMs += pauseMs;
    }
  }
}
