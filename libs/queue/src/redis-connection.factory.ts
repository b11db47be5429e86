// One connection factory per process. Producers (queues, stores) share a connection that fails fast when Redis
// is away (enableOfflineQueue: false); workers share one that retries blocking commands forever
// (maxRetriesPerRequest: null, as BullMQ requires; BullMQ duplicates it for each worker's blocking client).
import { Redis, type RedisOptions } from 'ioredis';

export interface ConnectionFactoryOptions {
  /** shown in CLIENT LIST, e.g. rx-sampler */
  connectionName?: string;
}

export class RedisConnectionFactory {
  private producerConn?: Redis;
  private workerConn?: Redis;
  private closed = false;

  constructor(private readonly url: string, private readonly opts: ConnectionFactoryOptions = {}) {}

  private make(role: 'producer' | 'worker', extra: RedisOptions): Redis {
    if (this.closed) throw new Error('the Redis connection factory is closed');
    const conn = new Redis(this.url, { connectionName: this.opts.connectionName ? `${this.opts.connectionName}-${role}` : undefined, ...extra });
    // errors surface through commands and health; an unhandled 'error' event must not crash the process
    conn.on('error', () => undefined);
    return conn;
  }

  /** for Queue instances and Redis-backed stores */
  producer(): Redis {
    return (this.producerConn ??= this.make('producer', { enableOfflineQueue: false, maxRetriesPerRequest: 2 }));
  }

  /** for BullMQ Workers */
  worker(): Redis {
    return (this.workerConn ??= this.make('worker', { maxRetriesPerRequest: null }));
  }

  /** resolves once the producer connection is ready; rejects after timeoutMs */
  async ready(timeoutMs = 10_000): Promise<void> {
    const conn = this.producer();
    if (conn.status === 'ready') return;
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => {
        cleanup();
        reject(new Error(`Redis at ${redactUrl(this.url)} did not answer within ${timeoutMs} ms`));
      }, timeoutMs);
      const onReady = () => {
        cleanup();
        resolve();
      };
      const cleanup = () => {
        clearTimeout(timer);
        conn.off('ready', onReady);
      };
      conn.on('ready', onReady);
    });
  }

  async ping(): Promise<boolean> {
    try {
      return (await this.producer().ping()) === 'PONG';
    } catch {
      return false;
    }
  }

  /** quits every connection it made (call after workers and queues are closed) */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await Promise.all(
      [this.producerConn, this.workerConn]
        .filter((c): c is Redis => c !== undefined)
        .map(async (c) => {
          try {
            if (c.status === 'ready') await c.quit();
            else c.disconnect();
          } catch {
            c.disconnect();
          }
        }),
    );
  }
}

/** the URL with its password replaced by *** (for logs and errors) */
export function redactUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    return u.toString();
  } catch {
    return '<invalid url>';
  }
}
