// `rx <args>` as a user types it (node -r ./tools/register.js apps/cli/src/main.ts) for the e2e tests: its stdout and
// stderr together, read until the pipes close (Node's 'exit' can come before the last of the output; a service that
// holds them past the CLI's exit is given 2 s), stopped with
// SIGINT past its deadline (SIGKILL 10 s later) and then an error with the output's tail.
import { spawn } from 'node:child_process';
import { childExit } from '@rx/local-stack/testing';
import { REPO_ROOT } from '../infra/repo-root';

export interface RxExit {
  status: number | null;
  output: string;
}

/** `env` is laid over this process's environment; a key set to undefined is removed */
export function runRx(args: string[], opts: { deadlineMs: number; env?: Record<string, string | undefined> }): Promise<RxExit> {
  const env: NodeJS.ProcessEnv = { ...process.env, ...opts.env };
  for (const [k, v] of Object.entries(opts.env ?? {})) if (v === undefined) delete env[k];
  const child = spawn(process.execPath, ['-r', './tools/register.js', 'apps/cli/src/main.ts', ...args], { cwd: REPO_ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr.on('data', (d: Buffer) => (output += d.toString()));
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    child.kill('SIGINT');
    setTimeout(() => child.kill('SIGKILL'), 10_000).unref();
  }, opts.deadlineMs);
  return childExit(child).then(({ code }) => {
    clearTimeout(timer);
    if (timedOut) throw new Error(`rx ${args.join(' ')} did not end within ${opts.deadlineMs / 1000} s; its output:\n${output.slice(-6000)}`);
    return { status: code, output };
  });
}
