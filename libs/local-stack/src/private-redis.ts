// A private redis-server for one run or one test, never a shared one: a free port on 127.0.0.1, a password of its
// own (requirepass; the configuration goes in on stdin, so `ps` never shows it), and, given a directory, an
// append-only file there, so that a restart (or a resumed run) finds every acknowledged write again. It runs under
// redis-guard.js, so it ends with the process that started it, however that ends.
import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import * as path from 'node:path';
import { Redis } from 'ioredis';
import { launchChild } from './child-process';
import { freePort } from './free-port';
import { onPath } from './on-path';

export interface PrivateRedisOptions {
  /** where the append-only file lives; none: nothing persisted */
  dataDir?: string;
  /** fsync policy of the append-only file (default everysec; always: every acknowledged write survives a SIGKILL) */
  appendfsync?: 'always' | 'everysec';
  /** started again on the same port and data when it crashes (default false: it exits, and close() resolves) */
  restartOnCrash?: boolean;
  password?: string;
  /** default: a free one (a restart on the same data passes the port and password it had) */
  port?: number;
  /** how long it may take to answer (default 10 s) */
  startTimeoutMs?: number;
}

export interface PrivateRedis {
  /** redis://:<password>@127.0.0.1:<port> */
  readonly url: string;
  readonly port: number;
  readonly password: string;
  /** the redis-server's own pid now (from INFO; the guard's pid is another) */
  serverPid(): Promise<number>;
  /** true while its guard runs */
  running(): boolean;
  /** stops it (SIGTERM: a clean shutdown, the AOF flushed); idempotent */
  close(): Promise<void>;
}

export class PrivateRedisError extends Error {
  override readonly name = 'PrivateRedisError';
}

/** PING through ioredis with the URL's password, true on PONG */
export async function redisAnswers(url: string, timeoutMs = 500): Promise<boolean> {
  const r = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null, connectTimeout: timeoutMs, enableOfflineQueue: false });
  r.on('error', () => undefined);
  try {
    await r.connect();
    return (await r.ping()) === 'PONG';
  } catch {
    return false;
  } finally {
    r.disconnect();
  }
}

export function redisServerOnPath(): boolean {
  return onPath('redis-server');
}

export async function startPrivateRedis(opts: PrivateRedisOptions = {}): Promise<PrivateRedis> {
  if (!redisServerOnPath()) throw new PrivateRedisError('redis-server is not on PATH (apt-get install redis-server, brew install redis)');
  const port = opts.port ?? (await freePort());
  const password = opts.password ?? randomBytes(16).toString('hex');
  const url = `redis://:${password}@127.0.0.1:${port}`;
  const lines = [`port ${port}`, 'bind 127.0.0.1', `requirepass ${password}`, 'save ""', 'maxmemory-policy noeviction'];
  if (opts.dataDir) {
    const dir = path.resolve(opts.dataDir);
    mkdirSync(dir, { recursive: true });
    lines.push(`dir ${JSON.stringify(dir)}`, 'appendonly yes', `appendfsync ${opts.appendfsync ?? 'everysec'}`);
  } else {
    lines.push('appendonly no');
  }
  // plain node (no TypeScript register): the guard starts in milliseconds
  const guard: ChildProcess = launchChild({
    command: process.execPath,
    args: [path.join(__dirname, 'redis-guard.js'), ...(opts.restartOnCrash ? ['restart'] : [])],
    stdio: ['pipe', 'ignore', 'inherit'],
  });
  guard.stdin?.end(`${lines.join('\n')}\n`);
  const exited = new Promise<void>((resolve) => {
    if (guard.exitCode !== null || guard.signalCode !== null) resolve();
    guard.once('exit', () => resolve());
  });
  const running = (): boolean => guard.exitCode === null && guard.signalCode === null;
  const close = async (): Promise<void> => {
    if (running()) guard.kill('SIGTERM');
    await exited;
  };
  const deadline = Date.now() + (opts.startTimeoutMs ?? 10_000);
  while (Date.now() < deadline) {
    if (!running()) throw new PrivateRedisError(`a private redis-server on port ${port} exited at start (${guard.exitCode ?? guard.signalCode})`);
    if (await redisAnswers(url, 300)) {
      return {
        url,
        port,
        password,
        running,
        close,
        serverPid: async () => {
          const r = new Redis(url, { maxRetriesPerRequest: 1, lazyConnect: true });
          r.on('error', () => undefined);
          try {
            await r.connect();
            const info = await r.info('server');
            return Number(/^process_id:(\d+)/m.exec(info)?.[1] ?? -1);
          } finally {
            r.disconnect();
          }
        },
      };
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  guard.kill('SIGKILL');
  throw new PrivateRedisError(`a private redis-server on port ${port} did not answer within ${Math.round((opts.startTimeoutMs ?? 10_000) / 1000)} s`);
}
