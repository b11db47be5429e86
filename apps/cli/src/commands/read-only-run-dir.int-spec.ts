// A run directory the user cannot write (a read-only mount, another user's files): rx run --resume and rx export
// each say so in one line and exit 2, never a stack trace, and leave it as it was. The directory is made read-only
// with chattr +i when the tests run as root (root writes through chmod), with chmod otherwise.
import { childExit } from '@rx/local-stack/testing';
import { execFileSync, spawn } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { REPO_ROOT } from '@rx/local-stack';

jest.setTimeout(180_000);

function rx(args: string[], env: Record<string, string> = {}): Promise<{ code: number | null; stdout: string; stderr: string; kill: (s: NodeJS.Signals) => void }> {
  const child = spawn(process.execPath, ['-r', './tools/register.js', 'apps/cli/src/main.ts', ...args], { cwd: REPO_ROOT, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const result = new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => void childExit(child).then(({ code }) => resolve({ code, stdout, stderr })));
  return Object.assign(result, { kill: (s: NodeJS.Signals) => child.kill(s) }) as never;
}

function dirsUnder(root: string): string[] {
  return [root, ...readdirSync(root, { withFileTypes: true, recursive: true }).filter((e) => e.isDirectory()).map((e) => path.join((e as unknown as { parentPath?: string; path: string }).parentPath ?? (e as unknown as { path: string }).path, e.name))];
}

function setReadOnly(root: string, readOnly: boolean): void {
  for (const d of dirsUnder(root)) {
    if (process.getuid?.() === 0) execFileSync('chattr', [readOnly ? '+i' : '-i', d]);
    else chmodSync(d, readOnly ? 0o555 : 0o755);
  }
}

describe('a read-only run directory', () => {
  let work: string;
  let run: string;
  beforeAll(async () => {
    work = mkdtempSync(path.join(tmpdir(), 'rx-read-only-'));
    run = path.join(work, 'run');
    // a run that got as far as its services: external ones that never come, interrupted as with Ctrl-C
    const started = rx(['run', '--spec', 'specs/embedded.json', '--out', run, '--services', 'external', '--port', 'off'], {
      REDIS_URL: process.env.REDIS_URL ?? 'redis://127.0.0.1:6379',
      RX_ALLOW_INSECURE_REDIS: '1',
      RX_BACKEND_URL: 'http://127.0.0.1:9',
      RX_QUEUE_PREFIX: `rx-read-only-${process.pid}`,
    }) as unknown as Promise<{ code: number | null }> & { kill: (s: NodeJS.Signals) => void };
    const deadline = Date.now() + 60_000;
    while (!existsSync(path.join(run, 'state.json')) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 200));
    started.kill('SIGINT');
    expect((await started).code).toBe(130);
    setReadOnly(run, true);
  });
  afterAll(() => {
    if (run && existsSync(run)) setReadOnly(run, false);
    rmSync(work, { recursive: true, force: true });
  });

  const snapshot = () => Object.fromEntries(readdirSync(run).map((f) => [f, `${statSync(path.join(run, f)).mtimeMs}:${statSync(path.join(run, f)).isFile() ? readFileSync(path.join(run, f), 'utf8').length : 'dir'}`]));

  it.each([
    ['rx run --resume', () => ['run', '--resume', run], /^rx: --resume .*: (no permission to write in|.* is on a read-only file system|cannot write in) .*; a run resumes in its own directory, which must be writable \(nothing was written\)\n$/],
    ['rx export', () => ['export', run], /^rx: rx export .*: (no permission to write in|.* is on a read-only file system|cannot write in) .*; the exchange record is written into the run directory: export a writable copy of it \(cp -r\)\n$/],
  ] as const)('%s: one line, exit 2, nothing changed', async (_what, args, line) => {
    const before = snapshot();
    const r = await rx(args());
    expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 2, stderr: expect.stringMatching(line) });
    expect(r.stderr.split('\n')).toHaveLength(2);
    expect(snapshot()).toEqual(before);
  });
});
