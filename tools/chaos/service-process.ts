// A TypeScript entry point run as a child process the way the Dockerfile runs a service (@rx/local-stack's
// startNodeProcess: node -r ./tools/register.js <entry>, with a lifeline, so it ends with this process), its
// stdout and stderr appended to a log file, waited on until it logs a JSON line `{"event":"ready","url":...}` when
// asked to. kill() is a crash (SIGKILL by default), stop() a SIGTERM.
import { REPO_ROOT, serviceFreeEnv, startNodeProcess, type NodeProcess, type ProcessExit } from '@rx/local-stack';

export { REPO_ROOT, type ProcessExit };

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

export async function launch(opts: LaunchOptions): Promise<ManagedProcess> {
  const p: NodeProcess = await startNodeProcess({ ...opts, baseEnv: serviceFreeEnv() });
  return {
    name: p.name,
    pid: p.pid,
    url: p.url,
    exited: p.exited,
    running: p.running,
    tail: (chars) => p.output(chars),
    kill: (signal) => p.kill(signal),
    stop: (graceMs) => p.stop(graceMs),
  };
}
