// Running rx commands for the fuzz tests: in-process (a command's `run`, with main.ts's error handling
// mirrored, stdout and stderr captured) for hundreds of cases, and as the real CLI (node + tools/register.js +
// apps/cli/src/main.ts) for the end-to-end samples, a bounded number of processes at a time.
import { execFile } from 'node:child_process';
import * as path from 'node:path';
import { UserError } from '@rx/cli';

export const REPO_ROOT = path.resolve(__dirname, '../..');

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
  /** in-process only: an error main.ts would report as an internal error (exit 1, with its stack) */
  crash?: unknown;
}

/** A stack frame line, as an uncaught error or an `internal error` report prints it. */
export const STACK_TRACE = /\n\s+at /;

type Command = (argv: string[]) => Promise<number>;

/**
 * Under jest, errors thrown by Node's own modules (parseArgs, fs) come from another realm, so the commands'
 * `err instanceof Error ? err.message : String(err)` takes String(err) there, which prefixes
 * `TypeError [ERR_…]: `; the real CLI prints the bare message. The prefix is removed so both read the same.
 */
const FOREIGN_ERROR_PREFIX = /\b[A-Za-z]*Error \[ERR_[A-Z0-9_]+\]: /g;

/**
 * Runs `command(argv)` in this process as main.ts would: its return value is the exit code; a UserError is
 * printed as `rx: <message>` with exit 2; anything else is an internal error (exit 1, `crash` set).
 */
export async function runInProcess(command: Command, argv: string[]): Promise<CliResult> {
  const out: string[] = [];
  const err: string[] = [];
  const stdoutWrite = process.stdout.write;
  const stderrWrite = process.stderr.write;
  const capture = (sink: string[]) =>
    ((chunk: string | Uint8Array): boolean => {
      sink.push(typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8'));
      return true;
    }) as typeof process.stdout.write;
  process.stdout.write = capture(out);
  process.stderr.write = capture(err);
  try {
    const code = await command(argv);
    return { code, stdout: out.join(''), stderr: err.join('').replace(FOREIGN_ERROR_PREFIX, '') };
  } catch (e) {
    if (e instanceof UserError) {
      err.push(`rx: ${e.message}\n`);
      return { code: 2, stdout: out.join(''), stderr: err.join('').replace(FOREIGN_ERROR_PREFIX, '') };
    }
    err.push(`rx: internal error: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
    return { code: 1, stdout: out.join(''), stderr: err.join(''), crash: e };
  } finally {
    process.stdout.write = stdoutWrite;
    process.stderr.write = stderrWrite;
  }
}

/** The real CLI: `node -r ./tools/register.js apps/cli/src/main.ts <args>` in the repo root. */
export function spawnRx(args: string[], env: NodeJS.ProcessEnv = process.env): Promise<CliResult> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ['-r', './tools/register.js', 'apps/cli/src/main.ts', ...args],
      { cwd: REPO_ROOT, timeout: 60_000, env, maxBuffer: 64 * 1024 * 1024 },
      (error, stdout, stderr) => {
        const code = error ? (typeof error.code === 'number' ? error.code : 1) : 0;
        resolve({ code, stdout, stderr });
      },
    );
  });
}

/** Maps `items` through `fn` with at most `limit` calls in flight; results in input order. */
export async function mapLimit<T, R>(items: readonly T[], limit: number, fn: (item: T, index: number) => Promise<R>): Promise<R[]> {
  const results = new Array<R>(items.length);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length) {
      const i = next++;
      results[i] = await fn(items[i], i);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return results;
}

/**
 * What every user mistake must look like: exit 2, nothing on stdout, exactly one stderr line `rx: …` of a
 * readable length, no stack trace. Returns the message (after `rx: `).
 */
export function expectOneLineUserError(r: CliResult): string {
  expect({ code: r.code, crash: r.crash }).toEqual({ code: 2, crash: undefined });
  expect(r.stderr).not.toMatch(STACK_TRACE);
  expect(r.stdout).toBe('');
  expect(r.stderr).toMatch(/^rx: [^\n]+\n$/);
  return r.stderr.slice(4, -1);
}
