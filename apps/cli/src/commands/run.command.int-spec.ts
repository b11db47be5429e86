// rx run as a user starts it: the CLI runs the controller as its child. When the CLI is killed outright (SIGKILL,
// a closed terminal), the controller must stop too, never drive the run on alone as an orphan.
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';

jest.setTimeout(60_000);

const REPO_ROOT = path.resolve(__dirname, '..', '..', '..', '..');

function controllerPidsFor(marker: string): number[] {
  return readdirSync('/proc')
    .filter((d) => /^\d+$/.test(d))
    .filter((pid) => {
      try {
        const args = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
        return args.some((a) => a.endsWith(path.join('apps', 'controller', 'src', 'main.ts'))) && args.includes(marker);
      } catch {
        return false;
      }
    })
    .map(Number);
}

async function until(what: string, f: () => boolean, ms: number): Promise<void> {
  const deadline = Date.now() + ms;
  while (!f()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe('rx run killed outright', () => {
  let work: string;
  beforeAll(() => (work = mkdtempSync(path.join(tmpdir(), 'rx-cli-kill-'))));
  afterAll(() => rmSync(work, { recursive: true, force: true }));

  it('takes its controller with it', async () => {
    const out = path.join(work, 'run');
    // external services that never come: the controller waits for consumers on a prefix nobody serves
    const cli = spawn(process.execPath, ['-r', './tools/register.js', 'apps/cli/src/main.ts', 'run', '--spec', 'specs/embedded.json', '--out', out, '--services', 'external', '--port', 'off'], {
      cwd: REPO_ROOT,
      env: {
        ...process.env,
        REDIS_URL: process.env.REDIS_URL ?? 'redis://127.0.0.1:6379',
        RX_ALLOW_INSECURE_REDIS: '1',
        RX_BACKEND_URL: 'http://127.0.0.1:9',
        RX_QUEUE_PREFIX: `rx-cli-kill-${process.pid}`,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    cli.stdout.on('data', (d: Buffer) => (output += d.toString()));
    cli.stderr.on('data', (d: Buffer) => (output += d.toString()));
    await until('the controller has opened the run', () => existsSync(path.join(out, 'state.json')), 30_000).catch((err: Error) => {
      throw new Error(`${err.message}\n${output}`);
    });
    const [controller] = controllerPidsFor(out);
    expect(controller).toBeGreaterThan(0);
    cli.kill('SIGKILL');
    await until('the controller has exited', () => !existsSync(`/proc/${controller}`) || readFileSync(`/proc/${controller}/stat`, 'utf8').split(' ')[2] === 'Z', 10_000);
    expect(controllerPidsFor(out)).toEqual([]);
  });
});
