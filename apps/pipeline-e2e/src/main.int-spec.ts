// Each service's real main.ts, as the Dockerfile runs it (node -r ./tools/register.js apps/<svc>/src/main.ts):
// a bad environment stops it with one line and exit code 1; a good one against the policy server (the real
// TinkerBackend client over HTTP) becomes healthy, and SIGTERM shuts it down cleanly with exit code 0.
import { childExit } from '@rx/local-stack/testing';
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { createRedisHarness } from '@rx/queue/testing';
import { REPO_ROOT } from './service-process';

jest.setTimeout(45_000);

const harness = createRedisHarness('main');
afterAll(() => harness.close());

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

function runMain(script: string, env: Record<string, string>, onStdout?: (text: string, kill: (signal: NodeJS.Signals) => void) => void): Promise<Run> {
  return new Promise((resolve) => {
    const clean = Object.fromEntries(Object.entries(process.env).filter(([k]) => !/^(REDIS_URL|RX_|PORT$|TINKER_)/.test(k)));
    const child = spawn(process.execPath, ['-r', './tools/register.js', script], { cwd: REPO_ROOT, env: { ...clean, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => {
      stdout += d.toString();
      onStdout?.(stdout, (s) => child.kill(s));
    });
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    void childExit(child).then(({ code }) => resolve({ code, stdout, stderr }));
  });
}

/** runs a service's main.ts until its 'ready' line, reads its /health, then sends SIGTERM */
async function healthThenTerm(script: string, env: Record<string, string>): Promise<Run & { health?: { status: number; body: unknown } }> {
  let health: { status: number; body: unknown } | undefined;
  let asked = false;
  const run = await runMain(script, env, (out, kill) => {
    const ready = out.split('\n').map((l) => { try { return JSON.parse(l) as { event?: string; url?: string }; } catch { return {}; } }).find((e) => e.event === 'ready');
    if (ready?.url && !asked) {
      asked = true;
      void fetch(`${ready.url}/health`).then(async (r) => {
        health = { status: r.status, body: await r.json() };
        kill('SIGTERM');
      });
    }
  });
  return { ...run, health };
}

describe('apps/<service>/src/main.ts', () => {
  it('every service: a bad environment is one line on stderr and exit code 1', async () => {
    const services = ['sampler', 'grader', 'advantage', 'trainer'];
    const runs = await Promise.all(services.map((svc) => runMain(`apps/${svc}/src/main.ts`, { REDIS_URL: 'redis://127.0.0.1:6379', RX_ALLOW_INSECURE_REDIS: '1', RX_BACKEND_URL: 'http://127.0.0.1:1', RX_JOB_CONCURRENCY: 'many' })));
    runs.forEach((r, i) => {
      expect(r).toEqual({ code: 1, stdout: '', stderr: `${services[i]}: invalid environment: RX_JOB_CONCURRENCY must be a number (got 'many')\n` });
    });
  });

  it('the services that call the model (sampler, trainer) need RX_BACKEND_URL; one line, exit 1', async () => {
    const services = ['sampler', 'trainer'];
    const runs = await Promise.all(services.map((svc) => runMain(`apps/${svc}/src/main.ts`, { REDIS_URL: 'redis://127.0.0.1:6379', RX_ALLOW_INSECURE_REDIS: '1' })));
    runs.forEach((r, i) => {
      expect(r).toEqual({ code: 1, stdout: '', stderr: `${services[i]}: invalid environment: RX_BACKEND_URL is required (the policy server or Tinker base URL)\n` });
    });
  });

  it('every service: a Redis URL without a password is refused unless RX_ALLOW_INSECURE_REDIS=1 (one line, exit 1)', async () => {
    const services = ['sampler', 'grader', 'advantage', 'trainer'];
    const runs = await Promise.all(services.map((svc) => runMain(`apps/${svc}/src/main.ts`, { REDIS_URL: 'redis://127.0.0.1:6379', RX_BACKEND_URL: 'http://127.0.0.1:1' })));
    runs.forEach((r, i) => {
      expect(r).toEqual({
        code: 1,
        stdout: '',
        stderr: `${services[i]}: invalid environment: REDIS_URL has no password: use a Redis with requirepass (redis://:<password>@host:6379), or set RX_ALLOW_INSECURE_REDIS=1 on a development machine\n`,
      });
    });
  });

  it('grader and advantage: healthy on Redis alone, given no backend URL or key, then a clean SIGTERM shutdown', async () => {
    for (const svc of ['grader', 'advantage']) {
      const run = await healthThenTerm(`apps/${svc}/src/main.ts`, { REDIS_URL: harness.url, RX_ALLOW_INSECURE_REDIS: '1', RX_QUEUE_PREFIX: harness.prefix, PORT: '0' });
      expect({ svc, health: run.health, code: run.code, stderr: run.stderr }).toEqual({ svc, health: { status: 200, body: { status: 'ok', service: svc, redis: true } }, code: 0, stderr: '' });
    }
  });

  it('trainer: healthy against the policy server over HTTP, then a clean SIGTERM shutdown', async () => {
    const dataDir = await mkdtemp(path.join(tmpdir(), 'rx-main-'));
    let policyKill: ((s: NodeJS.Signals) => void) | undefined;
    let policyUrl = '';
    let policyExit: Promise<Run> | undefined;
    const policyReady = new Promise<void>((resolve, reject) => {
      policyExit = runMain('apps/policy-server/testing/memory.main.ts', { PORT: '0', RX_DATA_DIR: path.join(dataDir, 'policy') }, (out, kill) => {
        const m = / at (http:\/\/[^\s,]+)/.exec(out);
        if (m && !policyUrl) {
          policyUrl = m[1];
          policyKill = kill;
          resolve();
        }
      });
      void policyExit.then((r) => {
        if (!policyUrl) reject(new Error(`policy server did not start: ${r.stderr}`));
      });
    });
    try {
      await policyReady;
      const trainer = await healthThenTerm('apps/trainer/src/main.ts', { REDIS_URL: harness.url, RX_ALLOW_INSECURE_REDIS: '1', RX_BACKEND_URL: policyUrl, RX_QUEUE_PREFIX: harness.prefix, PORT: '0' });
      expect(trainer.health).toEqual({ status: 200, body: { status: 'ok', service: 'trainer', redis: true, backend: true } });
      expect(trainer.code).toBe(0);
      expect(trainer.stderr).toBe('');
      const events = trainer.stdout.trim().split('\n').map((l) => (JSON.parse(l) as { event: string }).event);
      expect(events).toEqual(['ready', 'signal', 'closing', 'closed']);
      expect(trainer.stdout).not.toContain(harness.url.includes('@') ? harness.url : 'never-a-secret');
    } finally {
      policyKill?.('SIGTERM');
      const policy = await policyExit;
      expect(policy?.code).toBe(0);
      await rm(dataDir, { recursive: true, force: true });
    }
  });
});
