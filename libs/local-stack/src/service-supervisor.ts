// Starts the rx services as child processes (`node -r ./tools/register.js apps/<name>/src/main.ts`, each with its
// lifeline: child-process.ts), each on its own free port with its output in <logs>/<name>.log, waits until every
// /health answers 200, and stops them (SIGTERM, then SIGKILL after a grace period) at the end of the run or when the
// run is interrupted; they end with this process anyway, however it ends.
import type { ChildProcess } from 'node:child_process';
import { setTimeout as sleep } from 'node:timers/promises';
import { createWriteStream, mkdirSync, readFileSync, type WriteStream } from 'node:fs';
import * as path from 'node:path';
import { launchNodeChild } from './child-process';

export interface ServiceSpec {
  /** the app under apps/ */
  name: string;
  port: number;
  env: Record<string, string>;
  /** node flags before the entry point (e.g. a heap cap) */
  nodeArgs?: string[];
  /** the entry point, relative to the repository (default apps/<name>/src/main.ts; a test's own, e.g. apps/<name>/testing/hash-chain.main.ts) */
  entry?: string;
}

export interface RunningService {
  name: string;
  url: string;
  pid: number;
  logFile: string;
}

export class ServiceStartError extends Error {
  override readonly name = 'ServiceStartError';
}

export interface SupervisorOptions {
  logsDir: string;
  /** how long every /health may take to answer 200 (default 120 s: the services compile their sources at start) */
  healthTimeoutMs?: number;
  /** an abort (Ctrl-C) ends the wait for health at once */
  signal?: AbortSignal;
  /** SIGTERM to SIGKILL (default 10 s) */
  stopGraceMs?: number;
  /** extra environment for every child (PATH, HOME, ...); default process.env */
  baseEnv?: NodeJS.ProcessEnv;
}

interface Child {
  spec: ServiceSpec;
  proc: ChildProcess;
  log: WriteStream;
  logFile: string;
  exited: Promise<void>;
}

export class ServiceSupervisor {
  private readonly children: Child[] = [];
  private stopping: Promise<void> | null = null;
  private exitListener: ((name: string, code: number | null, signal: NodeJS.Signals | null) => void) | null = null;

  constructor(private readonly opts: SupervisorOptions) {}

  /** called when a service exits while the run still needs it */
  onUnexpectedExit(listener: (name: string, code: number | null, signal: NodeJS.Signals | null) => void): void {
    this.exitListener = listener;
  }

  /** Starts every service, then waits for all of them to be healthy; on failure stops what it started. */
  async start(specs: readonly ServiceSpec[]): Promise<RunningService[]> {
    mkdirSync(this.opts.logsDir, { recursive: true });
    for (const spec of specs) this.spawnOne(spec);
    try {
      await Promise.all(this.children.map((c) => this.waitHealthy(c)));
    } catch (err) {
      await this.stop();
      throw err;
    }
    return this.running();
  }

  /** every service started so far */
  running(): RunningService[] {
    return this.children.map((c) => ({ name: c.spec.name, url: `http://127.0.0.1:${c.spec.port}`, pid: c.proc.pid ?? -1, logFile: c.logFile }));
  }

  private spawnOne(spec: ServiceSpec): void {
    const logFile = path.join(this.opts.logsDir, `${spec.name}.log`);
    const log = createWriteStream(logFile, { flags: 'a' });
    const proc = launchNodeChild({
      entry: spec.entry ?? path.join('apps', spec.name, 'src', 'main.ts'),
      nodeArgs: spec.nodeArgs,
      env: { ...(this.opts.baseEnv ?? process.env), ...spec.env, PORT: String(spec.port) },
    });
    proc.stdout?.pipe(log, { end: false });
    proc.stderr?.pipe(log, { end: false });
    const exited = new Promise<void>((resolve) => {
      proc.once('exit', (code, signal) => {
        if (!this.stopping) this.exitListener?.(spec.name, code, signal);
        resolve();
      });
      proc.once('error', () => resolve());
    });
    this.children.push({ spec, proc, log, logFile, exited });
  }

  private async waitHealthy(child: Child): Promise<void> {
    const deadline = Date.now() + (this.opts.healthTimeoutMs ?? 120_000);
    const url = `http://127.0.0.1:${child.spec.port}/health`;
    let last = 'no answer';
    while (Date.now() < deadline) {
      this.opts.signal?.throwIfAborted();
      if (child.proc.exitCode !== null || child.proc.signalCode !== null) {
        throw new ServiceStartError(`${child.spec.name} exited (${child.proc.exitCode ?? child.proc.signalCode}) before it was healthy: ${tail(child.logFile)}`);
      }
      try {
        const res = await fetch(url, { signal: AbortSignal.timeout(2000) });
        if (res.ok) return;
        last = `HTTP ${res.status}`;
      } catch (err) {
        last = (err as Error).message;
      }
      await sleep(250, undefined, { signal: this.opts.signal });
    }
    throw new ServiceStartError(`${child.spec.name} was not healthy at ${url} within ${(this.opts.healthTimeoutMs ?? 120_000) / 1000} s (${last}); see ${child.logFile}`);
  }

  /** pids of the running children (for a synchronous kill on exit) */
  pids(): number[] {
    return this.children.filter((c) => c.proc.exitCode === null && c.proc.signalCode === null && c.proc.pid).map((c) => c.proc.pid as number);
  }

  /** SIGTERM to every child, SIGKILL to those still running after the grace period; idempotent. */
  stop(): Promise<void> {
    this.stopping ??= (async () => {
      const grace = this.opts.stopGraceMs ?? 10_000;
      await Promise.all(
        this.children.map(async (c) => {
          if (c.proc.exitCode === null && c.proc.signalCode === null) {
            c.proc.kill('SIGTERM');
            const timer = setTimeout(() => c.proc.kill('SIGKILL'), grace);
            await c.exited;
            clearTimeout(timer);
          }
          await new Promise<void>((r) => c.log.end(() => r()));
        }),
      );
    })();
    return this.stopping;
  }
}

/** the last lines of a log file, on one line (error messages) */
export function tail(file: string, lines = 5): string {
  try {
    const text = readFileSync(file, 'utf8').trim().split('\n').slice(-lines).join(' | ');
    return text === '' ? `(no output; ${file})` : `${text} (${file})`;
  } catch {
    return `(no log at ${file})`;
  }
}
