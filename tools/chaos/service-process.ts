// A TypeScript entry point run as a child process the way the Dockerfile runs a service
// (node -r ./tools/register.js <entry>), its stdout and stderr appended to a log file, waited on until it logs a
// JSON line `{"event":"ready","url":...}` when asked to. kill() is a crash (SIGKILL by default), stop() a SIGTERM.
import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, mkdirSync, type WriteStream } from 'node:fs';
import * as path from 'node:path';

export const REPO_ROOT = path.resolve(__dirname, '..', '..');

export interface ProcessExit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

export interface ManagedProcess {
  readonly name: string;
  readonly pid: number;
  /** the URL of its `ready` line (null when not waited for) */
  readonly url: string | null;
  readonly exited: Promise<ProcessExit>;
  running(): boolean;
  /** the last characters it printed (failure messages) */
  tail(chars?: number): string;
  kill(signal?: NodeJS.Signals): Promise<ProcessExit>;
  stop(graceMs?: number): Promise<ProcessExit>;
}

export interface LaunchOptions {
  name: string;
  /** relative to the repository root */
  entry: string;
  env: Record<string, string>;
  logFile: string;
  args?: string[];
  /** wait for the `ready` line (default true) */
  waitReady?: boolean;
  readyTimeoutMs?: number;
}

/** The parent's environment without anything a service reads (each child gets exactly what it is given). */
export function baseEnv(): Record<string, string> {
  return Object.fromEntries(
    Object.entries(process.env).filter((e): e is [string, string] => e[1] !== undefined && !/^(REDIS_URL|RX_|PORT$|HOST$|TINKER_|CHAOS_)/.test(e[0])),
  );
}

export function launch(opts: LaunchOptions): Promise<ManagedProcess> {
  mkdirSync(path.dirname(opts.logFile), { recursive: true });
  const log: WriteStream = createWriteStream(opts.logFile, { flags: 'a' });
  const child: ChildProcess = spawn(process.execPath, ['-r', './tools/register.js', opts.entry, ...(opts.args ?? [])], {
    cwd: REPO_ROOT,
    env: { ...baseEnv(), ...opts.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  const exited = new Promise<ProcessExit>((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
  void exited.then(() => log.end());
  const keep = (d: Buffer) => {
    out = (out + d.toString()).slice(-20_000);
    log.write(d);
  };
  child.stderr!.on('data', keep);

  const handle = (url: string | null): ManagedProcess => ({
    name: opts.name,
    pid: child.pid ?? -1,
    url,
    exited,
    running: () => child.exitCode === null && child.signalCode === null,
    tail: (chars = 3000) => out.slice(-chars),
    kill: async (signal = 'SIGKILL') => {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      return exited;
    },
    stop: async (graceMs = 10_000) => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
      const e = await exited;
      clearTimeout(timer);
      return e;
    },
  });

  if (opts.waitReady === false) {
    child.stdout!.on('data', keep);
    return Promise.resolve(handle(null));
  }
  return new Promise<ManagedProcess>((resolve, reject) => {
    let pending = '';
    let ready = false;
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`${opts.name} did not get ready within ${opts.readyTimeoutMs ?? 60_000} ms:\n${out.slice(-3000)}`));
    }, opts.readyTimeoutMs ?? 60_000);
    child.stdout!.on('data', (d: Buffer) => {
      keep(d);
      if (ready) return;
      pending += d.toString();
      const lines = pending.split('\n');
      pending = lines.pop() ?? '';
      for (const line of lines) {
        let event: { event?: string; url?: string } = {};
        try {
          event = JSON.parse(line) as typeof event;
        } catch {
          continue;
        }
        if (event.event === 'ready' && typeof event.url === 'string') {
          ready = true;
          clearTimeout(timer);
          resolve(handle(event.url));
          return;
        }
      }
    });
    void exited.then((e) => {
      clearTimeout(timer);
      if (!ready) reject(new Error(`${opts.name} exited (${e.code ?? e.signal}) before it was ready:\n${out.slice(-3000)}`));
    });
  });
}
