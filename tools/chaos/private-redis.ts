// A private redis-server for the chaos and recovery tests, never the shared one on 6379 (@rx/local-stack's, under
// its guard, so it ends with this process): a free port on 127.0.0.1, a password, and an append-only file fsynced
// on every write in its own directory, so that a restart (SIGTERM, or SIGKILL) comes back with every acknowledged
// write, as a production Redis with AOF does. restart() stops it and starts it again on the same port and data.
import { randomBytes } from 'node:crypto';
import { startPrivateRedis as startGuardedRedis, type PrivateRedis as GuardedRedis } from '@rx/local-stack';

export interface PrivateRedis {
  /** redis://:<password>@127.0.0.1:<port> */
  readonly url: string;
  readonly port: number;
  readonly password: string;
  /** how many times it was restarted */
  readonly restarts: number;
  /** stops the server (SIGTERM: a clean shutdown; SIGKILL: a crash) and starts it again on the same port and data */
  restart(signal?: 'SIGTERM' | 'SIGKILL', downMs?: number): Promise<void>;
  close(): Promise<void>;
}

export interface PrivateRedisOptions {
  /** where the append-only file lives */
  dir: string;
  password?: string;
}

export async function startPrivateRedis(opts: PrivateRedisOptions): Promise<PrivateRedis> {
  const password = opts.password ?? randomBytes(16).toString('hex');
  const start = (port?: number) => startGuardedRedis({ dataDir: opts.dir, appendfsync: 'always', password, port });
  let current: GuardedRedis = await start();
  const port = current.port;
  let restarts = 0;
  return {
    url: current.url,
    port,
    password,
    get restarts() {
      return restarts;
    },
    async restart(signal = 'SIGTERM', downMs = 300) {
      if (signal === 'SIGKILL') {
        // the server itself crashes (its guard, started without restart, exits with it)
        process.kill(await current.serverPid(), 'SIGKILL');
      }
      await current.close();
      await new Promise((r) => setTimeout(r, downMs));
      current = await start(port);
      restarts++;
    },
    close: () => current.close(),
  };
}
