// A private redis-server for the chaos and recovery tests, never the shared one on 6379: a free port on
// 127.0.0.1, a password (requirepass), and an append-only file fsynced on every write in its own directory,
// so that a restart (SIGTERM, or SIGKILL) comes back with every acknowledged write, as a production Redis with
// AOF does. restart() stops it and starts it again on the same port and data.
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { Redis } from 'ioredis';
import { unusedPort as freePort } from '@rx/backend/testing';


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

async function answers(url: string): Promise<boolean> {
  const r = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null, connectTimeout: 500 });
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

export async function startPrivateRedis(opts: PrivateRedisOptions): Promise<PrivateRedis> {
  if (!(await commandExists('redis-server'))) throw new Error('redis-server is not on PATH (apt-get install redis-server)');
  mkdirSync(opts.dir, { recursive: true });
  const port = await freePort();
  const password = opts.password ?? randomBytes(16).toString('hex');
  const url = `redis://:${password}@127.0.0.1:${port}`;
  let child: ChildProcess | null = null;
  let restarts = 0;

  const launch = async (): Promise<void> => {
    // the password goes in on stdin (a config file read from '-'), never on the command line (ps shows that)
    const proc = spawn('redis-server', ['-'], { cwd: opts.dir, stdio: ['pipe', 'ignore', 'ignore'] });
    proc.stdin!.end(
      [
        `port ${port}`,
        'bind 127.0.0.1',
        `dir ${opts.dir}`,
        `requirepass ${password}`,
        'appendonly yes',
        'appendfsync always',
        'save ""',
        'maxmemory-policy noeviction',
      ].join('\n') + '\n',
    );
    child = proc;
    for (let i = 0; i < 200; i++) {
      if (proc.exitCode !== null) throw new Error(`redis-server on port ${port} exited with ${proc.exitCode} at start`);
      if (await answers(url)) return;
      await new Promise((r) => setTimeout(r, 50));
    }
    proc.kill('SIGKILL');
    throw new Error(`redis-server on port ${port} did not answer within 10 s`);
  };

  const stop = (signal: 'SIGTERM' | 'SIGKILL'): Promise<void> =>
    new Promise((resolve) => {
      const c = child;
      if (!c || c.exitCode !== null || c.signalCode !== null) return resolve();
      c.once('exit', () => resolve());
      c.kill(signal);
    });

  await launch();
  return {
    url,
    port,
    password,
    get restarts() {
      return restarts;
    },
    async restart(signal = 'SIGTERM', downMs = 300) {
      await stop(signal);
      await new Promise((r) => setTimeout(r, downMs));
      await launch();
      restarts++;
    },
    close: () => stop('SIGTERM'),
  };
}

function commandExists(cmd: string): Promise<boolean> {
  return new Promise((resolve) => {
    const p = spawn('sh', ['-c', `command -v ${cmd}`], { stdio: 'ignore' });
    p.on('exit', (code) => resolve(code === 0));
    p.on('error', () => resolve(false));
  });
}
