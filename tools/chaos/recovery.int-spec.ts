// Crash recovery end to end, on a private Redis (password, AOF; never the shared one) with every service a real
// child process (the Dockerfile's command) and the policy server serving the hash-chain policy, whose weights
// are a hash chain of the optimizer steps applied (a step applied twice or lost changes every later sample):
// a clean run of both arms, then runs with one process SIGKILLed mid-stage (or Redis restarted mid-step) and
// restarted as a supervisor would. Each must complete with records, final weights, eval files and decision
// identical to the clean run, each arm exactly `steps` optimizer steps on the backend side, no rollout twice.
// Last, no log line or file written (nor the Redis AOF) holds the fake API key or the Redis password.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import type { RunResult } from './chaos-controller';
import { executeRun, type RunOutcome } from './chaos-run';
import { ChaosStack } from './chaos-stack';
import type { Fault } from './fault-plan';
import { scanForSecrets } from './secret-scan';

jest.setTimeout(120_000);

const STEPS = 2;
const EVAL_ITEMS = 6;
const apiKey = `rx-fake-key-${randomBytes(8).toString('hex')}`;
const redisPassword = `rx-fake-pw-${randomBytes(8).toString('hex')}`;
let dir: string;
let stack: ChaosStack;
let clean: RunResult;
let runs = 0;

beforeAll(async () => {
  dir = mkdtempSync(path.join(tmpdir(), 'rx-recovery-'));
  stack = await ChaosStack.start({ dir, model: 'hash-chain', apiKey, redisPassword, policyLatencyMs: 25, prefix: 'recovery' });
  const out = await run([]);
  expect(out).toMatchObject({ error: null, problems: [] });
  clean = out.result!;
}, 180_000);

afterAll(async () => {
  const codes = await stack?.close();
  // every service shut down cleanly on SIGTERM after all the crashes
  expect(codes).toEqual({ sampler: 0, grader: 0, advantage: 0, trainer: 0, 'policy-server': 0 });
  rmSync(dir, { recursive: true, force: true });
});

function run(faults: Fault[]): Promise<RunOutcome> {
  const n = runs++;
  return executeRun(stack, { runId: `rec-${n}`, outDir: path.join(dir, 'runs', String(n)), steps: STEPS, evalItems: EVAL_ITEMS, faults, clean, timeoutMs: 100_000 });
}

const fault = (target: Fault['target'], arm: string, step: number, stage: Fault['stage'], delayMs = 0): Fault => ({ target, arm, step, stage, delayMs });

/** the run completed, matched the clean run, and each fault hit its process mid-stage and was recovered */
function expectRecovered(out: RunOutcome, faults: Fault[]): void {
  expect({ error: out.error, problems: out.problems, differences: out.differences }).toEqual({ error: null, problems: [], differences: [] });
  expect(out.faults).toHaveLength(faults.length);
  for (const f of out.faults) {
    expect({ target: f.fault.target, recovered: f.recovered }).toEqual({ target: f.fault.target, recovered: true });
    expect(['mid-job', 'queued', 'mid-step']).toContain(f.landed);
  }
  for (const arm of Object.values(out.result!.arms)) expect(arm.records.at(-1)!.optimizerStep).toBe(STEPS);
}

describe('recovery from a crash of each process, and a Redis restart', () => {
  it('the clean run trains both arms and finds varied rewards (a real check, not constant advantages)', () => {
    const rewards = new Set(Object.values(clean.arms).flatMap((a) => a.records.flatMap((r) => r.rollouts.map((x) => x.reward))));
    expect(rewards.size).toBeGreaterThanOrEqual(3);
    expect(Object.keys(clean.arms).sort()).toEqual(['grpo_gs8', 'gs1_kernel']);
  });

  it('trainer SIGKILLed mid-train at step 1 (and the sampler mid-sample in the other arm): restarted, the trainer takes the step over from the committed state', async () => {
    const faults = [fault('sampler', 'gs1_kernel', 0, 'sample', 50), fault('trainer', 'grpo_gs8', 1, 'train', 30)];
    const out = await run(faults);
    expectRecovered(out, faults);
    expect(out.faults.find((f) => f.fault.target === 'trainer')?.step).toBe(1);
    const trainerLog = readFileSync(path.join(stack.logsDir, 'trainer.log'), 'utf8');
    expect(trainerLog).toMatch(/"event":"step-taken-over","runId":"rec-1","arm":"grpo_gs8","step":1/);
  });

  it('grader and advantage SIGKILLed mid-stage: their jobs are handed on after the lock expires, the window stays exact', async () => {
    const faults = [fault('grader', 'grpo_gs8', 0, 'grade'), fault('advantage', 'gs1_kernel', 1, 'advantage')];
    expectRecovered(await run(faults), faults);
  });

  it('the policy server SIGKILLed mid-sample at step 1: the services renew their sessions, the trainer rebuilds the arm from its committed state', async () => {
    const faults = [fault('policy-server', 'gs1_kernel', 1, 'sample', 40)];
    expectRecovered(await run(faults), faults);
  });

  it('Redis restarted (SIGKILL, AOF) mid-train, and the controller SIGKILLed mid-step and resumed', async () => {
    const faults = [fault('controller', 'gs1_kernel', 0, 'sample', 20), fault('redis', 'grpo_gs8', 1, 'train', 20)];
    const out = await run(faults);
    expectRecovered(out, faults);
    expect(stack.redis.restarts).toBe(1);
  });

  it('never printed a secret: the fake API key and the Redis password are in no log line, no file written, not in the Redis AOF', () => {
    const scan = scanForSecrets(dir, { 'API key': apiKey, 'Redis password': redisPassword });
    expect(scan.files).toBeGreaterThan(20);
    expect(scan.hits).toEqual([]);
    // the services did log their Redis URL, redacted
    const logs = readdirSync(stack.logsDir).map((f) => readFileSync(path.join(stack.logsDir, f), 'utf8')).join('\n');
    expect(logs).toContain(`redis://:***@127.0.0.1:${stack.redis.port}`);
    expect(logs).toContain('"TINKER_API_KEY":"***"');
  });
});
