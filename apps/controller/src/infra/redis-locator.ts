// The Redis a run uses, as the user asked for it:
//   - REDIS_URL given: exactly that server; a wrong password, nothing answering or something that is not Redis is
//     one line (RedisUnavailableError, exit 2), found before anything is written (checkGivenRedis);
//   - REDIS_URL unset: a private redis-server (libs/local-stack) for rx run's own services, its append-only file in
//     the run directory, ending with the controller; without redis-server on PATH, the local default 127.0.0.1:6379.
// The run says which in its first lines.
import { connect as tcpConnect, type Socket } from 'node:net';
import { connect as tlsConnect } from 'node:tls';
import { redisServerOnPath, startPrivateRedis } from '@rx/local-stack';
import { DEFAULT_REDIS_URL, redactUrl } from '../config';

export interface RedisHandle {
  url: string;
  /** no password and on this machine: the services rx run starts need RX_ALLOW_INSECURE_REDIS=1 for it */
  insecureLocal: boolean;
  /** true when this process started it (it is stopped by close, and ends with this process anyway) */
  private: boolean;
  close(): Promise<void>;
}

export class RedisUnavailableError extends Error {
  override readonly name = 'RedisUnavailableError';
}

/** what PING at a URL came to: ok, or why not in a few words */
export type RedisProbe = { ok: true } | { ok: false; problem: 'wrong-password' | 'needs-password' | 'unreachable' | 'not-redis'; detail: string };

/** PING over a raw socket (TLS for rediss://; AUTH first when the URL has a password), within timeoutMs. */
export function probeRedis(url: string, timeoutMs = 2000): Promise<RedisProbe> {
  return new Promise((resolve) => {
    let u: URL;
    try {
      u = new URL(url);
    } catch {
      resolve({ ok: false, problem: 'unreachable', detail: 'not a URL' });
      return;
    }
    const host = u.hostname.replace(/^\[|\]$/g, '');
    const port = Number(u.port || 6379);
    const sock: Socket = u.protocol === 'rediss:' ? tlsConnect({ host, port, servername: host, timeout: timeoutMs }) : tcpConnect({ host, port });
    let settled = false;
    const done = (result: RedisProbe): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      sock.destroy();
      resolve(result);
    };
    const timer = setTimeout(() => done({ ok: false, problem: 'unreachable', detail: `no answer within ${timeoutMs / 1000} s` }), timeoutMs);
    sock.on('error', (err: NodeJS.ErrnoException) => done({ ok: false, problem: 'unreachable', detail: err.code ?? err.message }));
    sock.on('close', () => done({ ok: false, problem: 'unreachable', detail: 'the connection was closed' }));
    sock.once(u.protocol === 'rediss:' ? 'secureConnect' : 'connect', () => {
      const user = u.username ? `${decodeURIComponent(u.username)} ` : '';
      const auth = u.password ? `AUTH ${user}${decodeURIComponent(u.password)}\r\n` : '';
      sock.write(`${auth}PING\r\n`);
    });
    let seen = '';
    sock.on('data', (d: Buffer) => {
      seen += d.toString('latin1');
      // every RESP reply starts with one of these; anything else (HTTP, SSH, a TLS alert) is not Redis
      if (!/^[+\-:$*_,#!=(%~>|]/.test(seen)) return done({ ok: false, problem: 'not-redis', detail: `it answered ${JSON.stringify(seen.slice(0, 24))}` });
      if (/^\+PONG\r\n|\r\n\+PONG\r\n/.test(seen)) return done({ ok: true });
      const error = /(?:^|\r\n)-([^\r\n]*)\r\n/.exec(seen)?.[1];
      if (error === undefined) return;
      if (/^NOAUTH/.test(error)) return done({ ok: false, problem: 'needs-password', detail: error });
      if (/^WRONGPASS|invalid password|invalid username-password|without any password configured/i.test(error)) return done({ ok: false, problem: 'wrong-password', detail: error });
      if (/^\+OK\r\n/.test(seen)) return;
      done({ ok: false, problem: 'not-redis', detail: error });
    });
  });
}

/** PING: true on PONG within timeoutMs (the health probes) */
export async function pingRedis(url: string, timeoutMs = 1000): Promise<boolean> {
  return (await probeRedis(url, timeoutMs)).ok;
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

const WHY: Record<Exclude<RedisProbe, { ok: true }>['problem'], string> = {
  'wrong-password': 'it refused the password in REDIS_URL',
  'needs-password': 'it wants a password, and REDIS_URL has none (redis://:<password>@host:port)',
  unreachable: 'nothing answers there',
  'not-redis': 'what answers there is not a Redis server',
};

/** REDIS_URL as given: one line (exit 2, nothing written) unless a Redis answers PING there with its credentials. */
export async function checkGivenRedis(url: string, timeoutMs = 3000): Promise<void> {
  const probe = await probeRedis(url, timeoutMs);
  if (probe.ok) return;
  throw new RedisUnavailableError(`REDIS_URL ${redactUrl(url)}: ${WHY[probe.problem]} (${probe.detail}); fix REDIS_URL, or unset it to let rx run start a private redis-server; nothing was written`);
}

export interface LocateRedisOptions {
  /** REDIS_URL as the user set it; undefined when unset */
  url: string | undefined;
  /** start a private redis-server when REDIS_URL is unset (rx run's own services); false: the local default */
  allowPrivate?: boolean;
  /** where a private redis-server keeps its append-only file, so that a resumed run finds its ledger again */
  dataDir?: string;
  /** a private redis-server started again on the same data when it crashes (default true) */
  restartOnCrash?: boolean;
  log?: (line: string) => void;
}

export async function locateRedis(opts: LocateRedisOptions): Promise<RedisHandle> {
  const shared = (url: string): RedisHandle => ({ url, private: false, insecureLocal: isInsecureLocal(url), close: async () => undefined });
  if (opts.url !== undefined) {
    await checkGivenRedis(opts.url);
    opts.log?.(`Redis: ${redactUrl(opts.url)} (REDIS_URL)`);
    return shared(opts.url);
  }
  if (opts.allowPrivate !== false && redisServerOnPath()) {
    const redis = await startPrivateRedis({ dataDir: opts.dataDir, restartOnCrash: opts.restartOnCrash ?? true }).catch((err: Error) => {
      throw new RedisUnavailableError(`REDIS_URL is unset and a private redis-server did not start: ${err.message}`);
    });
    opts.log?.(`Redis: REDIS_URL is unset, so a private redis-server for this run at ${redactUrl(redis.url)}${opts.dataDir ? ' (append-only file in the run directory)' : ''}; it ends with the run`);
    return { url: redis.url, private: true, insecureLocal: false, close: () => redis.close() };
  }
  const probe = await probeRedis(DEFAULT_REDIS_URL, 3000);
  if (!probe.ok) {
    throw new RedisUnavailableError(
      `REDIS_URL is unset, redis-server is not on PATH, and at ${DEFAULT_REDIS_URL} ${WHY[probe.problem]}: install redis-server (apt-get install redis-server), or set REDIS_URL`,
    );
  }
  opts.log?.(`Redis: REDIS_URL is unset and redis-server is not on PATH: the local Redis at ${DEFAULT_REDIS_URL}`);
  return shared(DEFAULT_REDIS_URL);
}
