// Finds the Redis the run uses: REDIS_URL when something answers PING there; otherwise, when redis-server is on
// PATH, a private one on a free port (no persistence) that lives as long as the run; otherwise one clear line.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { connect } from 'node:net';
import { freePort } from './free-port';
import { redactUrl } from '../config';

export interface RedisHandle {
  url: string;
  /** no password and on this machine: the services rx run starts need RX_ALLOW_INSECURE_REDIS=1 for it */
  insecureLocal: boolean;
  /** true when this process started it (it is stopped by close) */
  private: boolean;
  close(): Promise<void>;
}

export class RedisUnavailableError extends Error {
  override readonly name = 'RedisUnavailableError';
}

/** PING over a raw socket (AUTH first when the URL has a password); true on PONG within timeoutMs. */
export function pingRedis(url: string, timeoutMs = 1000): Promise<boolean> {
  return new Promise((resolve) => {
    let u: URL;
    try {
      u = new URL(url);
    } catch {
      resolve(false);
      return;
    }
    const sock = connect({ host: u.hostname, port: Number(u.port || 6379) });
    let settled = false;
    const done = (ok: boolean): void => {
      if (settled) return;
      settled = true;
      sock.destroy();
      resolve(ok);
    };
    sock.setTimeout(timeoutMs, () => done(false));
    sock.on('error', () => done(false));
    sock.on('connect', () => {
      const user = u.username ? `${decodeURIComponent(u.username)} ` : '';
      const auth = u.password ? `AUTH ${user}${decodeURIComponent(u.password)}\r\n` : '';
      sock.write(`${auth}PING\r\n`);
    });
    let seen = '';
    sock.on('data', (d) => {
      seen += d.toString();
      if (seen.includes('PONG')) done(true);
      else if (/-(NOAUTH|WRONGPASS|ERR)/.test(seen)) done(false);
    });
  });
}

/** a Redis URL without a password on a loopback address */
export function isInsecureLocal(url: string): boolean {
  try {
    const u = new URL(url);
    return u.password === '' && ['127.0.0.1', 'localhost', '[::1]', '::1'].includes(u.hostname);
  } catch {
    return false;
  }
}

function onPath(cmd: string): boolean {
  return spawnSync('sh', ['-c', `command -v ${cmd}`], { stdio: 'ignore' }).status === 0;
}

export interface LocateRedisOptions {
  url: string;
  /** start a private redis-server when nothing answers (default true) */
  allowPrivate?: boolean;
  /** where a private redis-server keeps its append-only file, so that a resumed run finds its ledger again */
  dataDir?: string;
  log?: (line: string) => void;
}

export async function locateRedis(opts: LocateRedisOptions): Promise<RedisHandle> {
  if (await pingRedis(opts.url)) return { url: opts.url, private: false, insecureLocal: isInsecureLocal(opts.url), close: async () => undefined };
  if (opts.allowPrivate === false || !onPath('redis-server')) {
    throw new RedisUnavailableError(
      `no Redis answers at ${redactUrl(opts.url)}: start one (apt-get install redis-server, or docker run -p 6379:6379 redis:7) or set REDIS_URL`,
    );
  }
  const port = await freePort();
  // a password of its own: the services refuse a Redis without one (outside development)
  const password = randomBytes(16).toString('hex');
  const child: ChildProcess = spawn('redis-server', ['-'], { stdio: ['pipe', 'ignore', 'ignore'] });
  // the configuration on stdin, so the password is not on the command line
  if (opts.dataDir) mkdirSync(opts.dataDir, { recursive: true });
  const persistence = opts.dataDir ? `dir ${JSON.stringify(opts.dataDir)}\nappendonly yes\nappendfsync everysec\n` : 'appendonly no\n';
  child.stdin?.end(`port ${port}\nbind 127.0.0.1\nrequirepass ${password}\nsave ""\n${persistence}`);
  const url = `redis://:${password}@127.0.0.1:${port}`;
  for (let i = 0; i < 100; i++) {
    if (child.exitCode !== null) break;
    if (await pingRedis(url, 300)) {
      opts.log?.(`no Redis at ${redactUrl(opts.url)}: started a private redis-server at ${redactUrl(url)} for this run`);
      return {
        url,
        private: true,
        insecureLocal: false,
        close: () =>
          new Promise<void>((resolve) => {
            if (child.exitCode !== null || child.signalCode !== null) return resolve();
            child.once('exit', () => resolve());
            child.kill('SIGTERM');
          }),
      };
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  child.kill('SIGKILL');
  throw new RedisUnavailableError(`no Redis answers at ${redactUrl(opts.url)} and a private redis-server on port ${port} did not start`);
}
