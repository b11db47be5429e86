// rx run as a user starts it: the CLI runs the controller as its child. When the CLI is killed outright (SIGKILL,
// a closed terminal), the controller must stop too, never drive the run on alone as an orphan; a SIGINT, from a
// terminal's Ctrl-C or sent to the CLI alone, stops the run gracefully.
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { freePort, startPrivateRedis, type PrivateRedis } from '@rx/local-stack';

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

function startRun(out: string, tag: string, detached = false, env: Record<string, string> = {}) {
  // external services that never come: the controller waits for consumers on a prefix nobody serves
  const cli = spawn(process.execPath, ['-r', './tools/register.js', 'apps/cli/src/main.ts', 'run', '--spec', 'specs/embedded.json', '--out', out, '--services', 'external', '--port', 'off'], {
    cwd: REPO_ROOT,
    detached,
    env: {
      ...process.env,
      REDIS_URL: process.env.REDIS_URL ?? 'redis://127.0.0.1:6379',
      RX_ALLOW_INSECURE_REDIS: '1',
      RX_BACKEND_URL: 'http://127.0.0.1:9',
      RX_QUEUE_PREFIX: `rx-cli-${tag}-${process.pid}`,
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const run = { cli, output: '', exit: new Promise<number | null>((resolve) => cli.once('exit', (code) => resolve(code))) };
  cli.stdout.on('data', (d: Buffer) => (run.output += d.toString()));
  cli.stderr.on('data', (d: Buffer) => (run.output += d.toString()));
  return run;
}

async function untilOpened(run: ReturnType<typeof startRun>, out: string): Promise<number> {
  await until('the controller has opened the run', () => existsSync(path.join(out, 'state.json')), 30_000).catch((err: Error) => {
    throw new Error(`${err.message}\n${run.output}`);
  });
  const [controller] = controllerPidsFor(out);
  expect(controller).toBeGreaterThan(0);
  return controller;
}

const exited = (pid: number) => () => !existsSync(`/proc/${pid}`) || readFileSync(`/proc/${pid}/stat`, 'utf8').split(' ')[2] === 'Z';

describe('rx run killed outright', () => {
  let work: string;
  beforeAll(() => (work = mkdtempSync(path.join(tmpdir(), 'rx-cli-kill-'))));
  afterAll(() => rmSync(work, { recursive: true, force: true }));

  it('takes its controller with it', async () => {
    const out = path.join(work, 'run');
    const run = startRun(out, 'kill');
    const controller = await untilOpened(run, out);
    run.cli.kill('SIGKILL');
    await until('the controller has exited', exited(controller), 10_000);
    expect(controllerPidsFor(out)).toEqual([]);
  });

  it('says in one line that its controller died, with the command that resumes the run', async () => {
    const out = path.join(work, 'controller-killed');
    const run = startRun(out, 'controller-kill');
    const controller = await untilOpened(run, out);
    process.kill(controller, 'SIGKILL');
    expect(await run.exit).toBe(137);
    const lines = run.output.trim().split('\n');
    expect(lines[lines.length - 1]).toBe(`rx: the controller was killed (SIGKILL); the run directory keeps what is done: continue with rx run --resume ${out}`);
  });
});

describe('rx run with REDIS_URL given', () => {
  let work: string;
  let redis: PrivateRedis;
  beforeAll(async () => {
    work = mkdtempSync(path.join(tmpdir(), 'rx-cli-redis-'));
    redis = await startPrivateRedis({ password: 'the-right-password' });
  });
  afterAll(async () => {
    await redis.close();
    rmSync(work, { recursive: true, force: true });
  });

  it.each([
    ['a wrong password', () => `redis://:not-the-password@127.0.0.1:${redis.port}`, /refused the password in REDIS_URL/],
    ['a port where nothing answers', async () => `redis://127.0.0.1:${await freePort()}`, /nothing answers there/],
  ] as const)('%s: one line, exit 2, --out not created', async (what, urlOf, why) => {
    const out = path.join(work, what.replace(/ /g, '-'));
    const url = await urlOf();
    const run = startRun(out, 'redis', false, { REDIS_URL: url });
    expect(await run.exit).toBe(2);
    expect(existsSync(out)).toBe(false);
    const lines = run.output.trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(why);
    expect(lines[0]).toMatch(/^rx: REDIS_URL redis:\/\/.*: .*nothing was written$/);
    expect(run.output).not.toContain('not-the-password');
  });
});

describe('rx run interrupted', () => {
  let work: string;
  beforeAll(() => (work = mkdtempSync(path.join(tmpdir(), 'rx-cli-int-'))));
  afterAll(() => rmSync(work, { recursive: true, force: true }));

  it('stops on SIGINT sent to the rx process alone, as on Ctrl-C', async () => {
    const out = path.join(work, 'alone');
    const run = startRun(out, 'int-alone');
    const controller = await untilOpened(run, out);
    run.cli.kill('SIGINT');
    expect(await run.exit).toBe(130);
    await until('the controller has exited', exited(controller), 10_000);
    expect(run.output).toContain('SIGINT: stopping the run');
    expect(run.output).toContain('--resume');
  });

  it('takes a Ctrl-C (SIGINT to the whole process group, passed on by the CLI too) as one interrupt, not a forced stop', async () => {
    const out = path.join(work, 'group');
    const run = startRun(out, 'int-group', true);
    const controller = await untilOpened(run, out);
    process.kill(-run.cli.pid!, 'SIGINT');
    expect(await run.exit).toBe(130);
    await until('the controller has exited', exited(controller), 10_000);
    expect(run.output.match(/stopping the run/g)).toHaveLength(1);
    // a graceful stop leaves the run resumable: its state says interrupted, not running
    expect(JSON.parse(readFileSync(path.join(out, 'state.json'), 'utf8')).status).toBe('interrupted');
  });
});
