// The one place rx starts a child process (a service, the policy server, a private Redis through its guard, the
// controller). Each child gets a lifeline: the read end of a pipe whose write end only this process holds (libuv
// opens it close-on-exec, so no other child inherits it). When this process ends, however it ends (SIGKILL and the
// OOM killer included), the kernel closes the write end, the child reads EOF and exits (lifeline.ts): a process tree
// with one owner, on Linux and macOS alike. A Node child watches it through the `-r lifeline.preload.ts` that
// launchNode adds; anything else is started under redis-guard.js, which watches it for that child.
import { spawn, type ChildProcess, type StdioOptions } from 'node:child_process';
import * as path from 'node:path';
import { LIFELINE_FD_ENV } from './lifeline';
import { REPO_ROOT } from './repo-root';

export interface ChildOptions {
  command: string;
  args?: readonly string[];
  cwd?: string;
  /** the child's whole environment (default: this process's) */
  env?: NodeJS.ProcessEnv;
  /** stdin, stdout, stderr (and an `ipc` channel); the lifeline is added after them */
  stdio?: StdioOptions;
  /** the child watches a lifeline (default true); false for a child that outlives nothing (none today but `sh -c`) */
  lifeline?: boolean;
  /** its own process group (kill(-pid) reaches the child and its children) */
  detached?: boolean;
}

/** every child started here that still runs: SIGKILLed when this process exits (the lifeline's backstop) */
const LIVE = new Set<ChildProcess>();
let exitHookInstalled = false;

/** SIGKILL every child still running (a process that exits without stopping them). */
export function killAllChildren(): void {
  for (const c of LIVE) {
    try {
      c.kill('SIGKILL');
    } catch {
      // already gone
    }
  }
  LIVE.clear();
}

export function launchChild(opts: ChildOptions): ChildProcess {
  const given = opts.stdio ?? ['ignore', 'pipe', 'pipe'];
  const stdio: StdioOptions = typeof given === 'string' ? [given, given, given] : [...given];
  const env: NodeJS.ProcessEnv = { ...(opts.env ?? process.env) };
  delete env[LIFELINE_FD_ENV];
  if (opts.lifeline !== false) {
    // the lifeline is the next descriptor after those asked for (3, or 4 after an ipc channel)
    env[LIFELINE_FD_ENV] = String(stdio.length);
    stdio.push('pipe');
  }
  const child = spawn(opts.command, [...(opts.args ?? [])], { cwd: opts.cwd ?? REPO_ROOT, env, stdio, detached: opts.detached });
  if (opts.lifeline !== false) {
    // never written to and never keeping this process up: it only has to stay open while this process lives
    const line = child.stdio[stdio.length - 1] as NodeJS.WritableStream & { unref?: () => void; on: (e: string, f: () => void) => void };
    line.on('error', () => undefined);
    line.unref?.();
    (line as unknown as { _handle?: { unref?: () => void } })._handle?.unref?.();
  }
  LIVE.add(child);
  const forget = () => LIVE.delete(child);
  child.once('exit', forget);
  child.once('error', forget);
  if (!exitHookInstalled) {
    exitHookInstalled = true;
    process.on('exit', killAllChildren);
  }
  return child;
}

export interface NodeChildOptions extends Omit<ChildOptions, 'command' | 'args'> {
  /** a TypeScript or JavaScript entry point, relative to the repository root or absolute */
  entry: string;
  args?: readonly string[];
  /** node flags before the entry point (e.g. a heap cap) */
  nodeArgs?: readonly string[];
}

/** A Node entry point started as the Dockerfile starts a service (node -r ./tools/register.js <entry>), with its lifeline watched. */
export function launchNodeChild(opts: NodeChildOptions): ChildProcess {
  const register = path.join(REPO_ROOT, 'tools', 'register.js');
  const watch = opts.lifeline === false ? [] : ['-r', path.join(__dirname, 'lifeline.preload.ts')];
  const entry = path.isAbsolute(opts.entry) ? opts.entry : path.join(REPO_ROOT, opts.entry);
  const args = [...(opts.nodeArgs ?? []), '-r', register, ...watch, entry, ...(opts.args ?? [])];
  return launchChild({ command: process.execPath, args, cwd: opts.cwd, env: opts.env, stdio: opts.stdio, lifeline: opts.lifeline, detached: opts.detached });
}
