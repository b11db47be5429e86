// TEST HARNESS. Redis for *.int-spec.ts files: a key prefix of its own per test file (BullMQ queues and stores
// never meet another file's), connections tracked and all closed (with the prefix's keys deleted) by close().
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { RedisConnectionFactory } from '@rx/queue';

export interface RedisHarness {
  readonly url: string;
  /** unique per harness: `t-<tag>-<random>` */
  readonly prefix: string;
  /** a plain connection (closed by close()) */
  redis(): Redis;
  /** a connection factory (closed by close()) */
  connections(): RedisConnectionFactory;
  /** keys under the prefix */
  keys(pattern?: string): Promise<string[]>;
  close(): Promise<void>;
}

export function createRedisHarness(tag: string): RedisHarness {
  const url = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
  const prefix = `t-${tag}-${randomBytes(4).toString('hex')}`;
  const plain: Redis[] = [];
  const factories: RedisConnectionFactory[] = [];
  let admin: Redis | undefined;
  const adminConn = () => (admin ??= new Redis(url, { maxRetriesPerRequest: 2 }));
  const keys = async (pattern = '*'): Promise<string[]> => {
    const found: string[] = [];
    let cursor = '0';
    do {
      const [next, batch] = await adminConn().scan(cursor, 'MATCH', `${prefix}:${pattern}`, 'COUNT', 1000);
      found.push(...batch);
      cursor = next;
    } while (cursor !== '0');
    return found;
  };
  return {
    url,
    prefix,
    redis() {
      const r = new Redis(url, { maxRetriesPerRequest: 2 });
      plain.push(r);
      return r;
    },
    connections() {
      const f = new RedisConnectionFactory(url, { connectionName: `rx-test-${tag}` });
      factories.push(f);
      return f;
    },
    keys,
    async close() {
      const stale = await keys();
      for (let i = 0; i < stale.length; i += 500) await adminConn().del(...stale.slice(i, i + 500));
      await Promise.all(factories.map((f) => f.close()));
      await Promise.all(plain.map((r) => r.quit().catch(() => r.disconnect())));
      await adminConn().quit();
    },
  };
}
