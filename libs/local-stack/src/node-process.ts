// A Node entry point (a service's main.ts, the policy server, a bench's forwarder) as a child process with its
// lifeline (child-process.ts): its output kept for failure messages (and appended to a log file when given), waited
// on until it logs a JSON line `{"event":"ready","url":...}` when asked to. kill() is a crash (SIGKILL by default),
// stop() a SIGTERM with a SIGKILL after a grace period.
import type { ChildProcess } from 'node:child_process';
import { createWriteStream, mkdirSync, type WriteStream } from 'node:fs';
import * as path from 'node:path';
import { launchNodeChild } from './child-process';

export interface ProcessExit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

export interface NodeProcess {
  readonly name: string;
  readonly pid: number;
  readonly child: ChildProcess;
  /** the URL of its `ready` line (null when not waited for) */
  readonly url: string | null;
  readonly exited: Promise<ProcessExit>;
  running(): boolean;
  /** the last characters it printed */
  output(chars?: number): string;
  kill(signal?: NodeJS.Signals): Promise<ProcessExit>;
  stop(graceMs?: number): Promise<ProcessExit>;
}

export interface NodeProcessOptions {
  name: string;
  /** relative to the repository root, or absolute */
  entry: string;
  env: Record<string, string>;
  args?: readonly string[];
  nodeArgs?: readonly string[];
  /** where its stdout and stderr are appended (default: kept in memory only) */
  logFile?: string;
  /** wait for the `ready` line (default true) */
  waitReady?: boolean;
  readyTimeoutMs?: number;
  /** the environment the child starts from (default: this one less what a service reads, see serviceFreeEnv) */
  baseEnv?: Record<string, string>;
}

/** This process's environment without anything a service reads, so a child gets exactly what it is given. */
export function serviceFreeEnv(): Record<string, string> {
  return Object.fromEntries(
    Object.entries(process.env).filter((e): e is [string, string] => e[1] !== undefined && !/^(REDIS_URL|RX_|PORT$|HOST$|TINKER_|CHAOS_)/.test(e[0])),
  );
}

const KEEP_CHARS = 20_000;

export function startNodeProcess(opts: NodeProcessOptions): Promise<NodeProcess> {
  let log: WriteStream | null = null;
  if (opts.logFile) {
    mkdirSync(path.dirname(opts.logFile), { recursive: true });
    log = createWriteStream(opts.logFile, { flags: 'a' });
  }
  const child = launchNodeChild({ entry: opts.entry, args: opts.args, nodeArgs: opts.nodeArgs, env: { ...(opts.baseEnv ?? serviceFreeEnv()), ...opts.env } });
  let out = '';
  const exited = new Promise<ProcessExit>((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
  void exited.then(() => log?.end());
  const keep = (d: Buffer) => {
    out = (out + d.toString()).slice(-KEEP_CHARS);
    log?.write(d);
  };
  child.stderr?.on('data', keep);
  const running = () => child.exitCode === null && child.signalCode === null;

  const handle = (url: string | null): NodeProcess => ({
    name: opts.name,
    pid: child.pid ?? -1,
    child,
    url,
    exited,
    running,
    output: (chars = 3000) => out.slice(-chars),
    kill: async (signal = 'SIGKILL') => {
      if (running()) child.kill(signal);
      return exited;
    },
    stop: async (graceMs = 10_000) => {
      if (running()) child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
      const e = await exited;
      clearTimeout(timer);
      return e;
    },
  });

  if (opts.waitReady === false) {
    child.stdout?.on('data', keep);
    return Promise.resolve(handle(null));
  }
  const timeoutMs = opts.readyTimeoutMs ?? 60_000;
  return new Promise<NodeProcess>((resolve, reject) => {
    let pending = '';
    let ready = false;
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`${opts.name} did not log 'ready' within ${timeoutMs} ms:\n${out.slice(-3000)}`));
    }, timeoutMs);
    child.stdout?.on('data', (d: Buffer) => {
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

/** starts every process in parallel; if one fails, stops the others and throws its error */
export async function startNodeProcesses(list: readonly NodeProcessOptions[]): Promise<NodeProcess[]> {
  const started = await Promise.allSettled(list.map((o) => startNodeProcess(o)));
  const ok = started.filter((s): s is PromiseFulfilledResult<NodeProcess> => s.status === 'fulfilled').map((s) => s.value);
  const failed = started.find((s): s is PromiseRejectedResult => s.status === 'rejected');
  if (failed) {
    await Promise.all(ok.map((p) => p.stop().catch(() => null)));
    throw failed.reason;
  }
  return ok;
}
