// A restarted controller pod (k8s): the controller driving a run is SIGKILLed mid-training, and a replacement on
// another host (its lock names the crashed pod, whose last heartbeat is fresh) starts a second later on the same run
// directory. The replacement must wait the crashed pod's heartbeat out (the staleness window) and take the run over,
// not give up with exit 2 (a FailJob under the Job's podFailurePolicy), then finish it with the same results as a
// run nobody killed. Real processes throughout: the controller (apps/controller/src/main.ts), the four services,
// the hash-chain test policy, real Redis. The window is shortened to 20 s (RX_RUN_LOCK_STALE_MS): a wait fixed at
// the old 10 s, or any wait not derived from the window, exits 2 here.
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import type { StepRecord } from '@rx/contracts';
import { createRedisHarness } from '@rx/queue/testing';
import { freePort, ServiceSupervisor } from '@rx/local-stack';
import { REPO_ROOT } from '../infra/repo-root';
import { readRunFile, RunDir } from '@rx/run-dir';
import { jsonLines } from './run-directory.check';
import { hashChainEntry } from '@rx/local-stack/testing';

jest.setTimeout(240_000);

const STALE_MS = 20_000;
const STEPS = 3;
const N_EVAL = 16;
const harness = createRedisHarness('controller-takeover');
let work: string;
let env: Record<string, string>;
const supervisor = new ServiceSupervisor({ logsDir: mkdtempSync(path.join(tmpdir(), 'rx-takeover-logs-')) });

interface Controller {
  pid: number;
  output: () => string;
  exit: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

function controller(args: string[]): Controller {
  const child = spawn(process.execPath, ['-r', path.join(REPO_ROOT, 'tools', 'register.js'), path.join(REPO_ROOT, 'apps', 'controller', 'testing', 'hash-chain.main.ts'), 'run', ...args], {
    cwd: REPO_ROOT,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr.on('data', (d: Buffer) => (output += d.toString()));
  return { pid: child.pid as number, output: () => output, exit: new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal }))) };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function until(what: string, f: () => boolean, ms: number): Promise<void> {
  const deadline = Date.now() + ms;
  while (!f()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`);
    await sleep(50);
  }
}

function newRun(out: string): Controller {
  return controller(['--spec', path.join(REPO_ROOT, 'specs', 'embedded.json'), '--override', path.join(work, 'override.json'), '--out', out, '--services', 'external', '--port', 'off']);
}

beforeAll(async () => {
  work = mkdtempSync(path.join(tmpdir(), 'rx-takeover-'));
  env = {
    REDIS_URL: harness.url,
    RX_BACKEND_URL: 'memory://hash-chain',
    RX_QUEUE_PREFIX: harness.prefix,
    RX_DATA_DIR: path.join(work, 'services'),
    RX_ALLOW_INSECURE_REDIS: '1',
    RX_CONCURRENCY: '16',
    RX_RUN_LOCK_STALE_MS: String(STALE_MS),
  };
  // the spec's own arith data in the hash-chain policy's hands: its rewards are not a model's, so the gates' bounds
  // on them are opened (this test is about who drives the run, not about the gates)
  const checks = [
    { metric: 'pilot_mean_reward', min: -1, max: 1 },
    { metric: 'kernel_effective_neighbors_p10', min: 0 },
    { metric: 'baseline_reward_corr', min: -1 },
  ];
  writeFileSync(
    path.join(work, 'override.json'),
    JSON.stringify({ steps: STEPS, dataset: { n_examples: STEPS * 64 }, eval: { n_examples: N_EVAL }, feasibility: { effective_config: { steps: STEPS, n_eval: N_EVAL } }, activation_gate: { checks } }),
  );
  await supervisor.start(await Promise.all(['sampler', 'grader', 'advantage', 'trainer'].map(async (name) => ({ name, port: await freePort(), env, entry: hashChainEntry(name) }))));
});

afterAll(async () => {
  await supervisor.stop();
  await harness.close();
  rmSync(work, { recursive: true, force: true });
});

describe('a controller pod restarted after a SIGKILL', () => {
  it('waits out the crashed pod’s heartbeat, takes the run over and completes it as an uninterrupted run does', async () => {
    const reference = newRun(path.join(work, 'reference'));
    const ref = await reference.exit;
    if (ref.code !== 0) throw new Error(`the reference run exited ${ref.code}: ${reference.output()}`);

    const out = path.join(work, 'killed');
    const dir = new RunDir(out);
    const first = newRun(out);
    await until('the first controller is training', () => existsSync(dir.stepsFile('grpo_gs8')) || existsSync(dir.stepsFile('gs1_kernel')), 120_000);
    process.kill(first.pid, 'SIGKILL');
    expect((await first.exit).signal).toBe('SIGKILL');
    // what the replacement pod finds: the crashed pod's lock (another host), its last heartbeat a moment ago
    const lock = JSON.parse(readFileSync(dir.lockFile, 'utf8')) as { pid: number; host: string };
    expect(lock.pid).toBe(first.pid);
    writeFileSync(dir.lockFile, JSON.stringify({ ...lock, host: 'rx-controller-crashed-pod', heartbeat_at: new Date().toISOString() }));
    await sleep(1_000);

    const started = Date.now();
    const replacement = controller(['--resume', out, '--services', 'external', '--port', 'off']);
    const done = await replacement.exit;
    if (done.code !== 0) throw new Error(`exit ${done.code}: ${replacement.output()}`);
    // it did wait for the window (the lock was live-looking), and did not refuse
    expect(Date.now() - started).toBeGreaterThan(STALE_MS - 1_500);
    expect(replacement.output()).not.toMatch(/is being driven by/);

    const a = readRunFile(new RunDir(path.join(work, 'reference')), 'record.json');
    const b = readRunFile(dir, 'record.json');
    expect(b.attempts.map((x) => [x.resumed, x.outcome])).toEqual([
      [false, 'running'],
      [true, 'complete'],
    ]);
    for (const model of ['base', 'grpo_gs8', 'gs1_kernel']) expect([model, b.evaluation!.models[model].sha256]).toEqual([model, a.evaluation!.models[model].sha256]);
    expect({ ...b.decision, reproduce: '' }).toEqual({ ...a.decision, reproduce: '' });
    const steps = (d: string, arm: string) => jsonLines<StepRecord>(new RunDir(d).stepsFile(arm)).map((r) => [r.step, r.loss, r.rollouts.map((x) => [x.reward, x.advantage])]);
    for (const arm of ['grpo_gs8', 'gs1_kernel']) expect([arm, steps(out, arm)]).toEqual([arm, steps(path.join(work, 'reference'), arm)]);
  });
});
