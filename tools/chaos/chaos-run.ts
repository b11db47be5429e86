// One chaos run: the chaos controller as a child process over the stack, each planned fault injected when its
// stage's job (of its arm and step) is queued or running, followed by a restart of what it hit; then the run's
// result read back, checked on its own and against the clean run. A fault whose step finished before its stage
// was seen moves to the next step; past the last step it fires as soon as it can ("late", e.g. mid-evaluation).
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { Redis } from 'ioredis';
import { jobIdFor, type QueueName } from '@rx/contracts';
import { EMBEDDED_BASE_MODEL } from '@rx/embedded-model';
import { RedisRolloutWindowStore, RedisTrainerStepLedger } from '@rx/queue';
import { backendOptimizerSteps } from './backend-steps';
import type { RunResult } from './chaos-controller';
import type { ChaosStack } from './chaos-stack';
import type { Fault, FaultStage } from './fault-plan';
import { checkRun, compareRuns } from './run-comparison';
import { launch, type ManagedProcess } from './service-process';

const QUEUE_OF_STAGE: Record<FaultStage, QueueName> = {
  prepare: 'step-requests',
  sample: 'sample-requests',
  grade: 'rollouts',
  advantage: 'graded-rollouts',
  train: 'train-steps',
};

export interface InjectedFault {
  fault: Fault;
  /** the step it finally landed in (a fault carried over from a step that finished first lands later) */
  step: number;
  /**
   * mid-job: the stage's job was running when it hit; queued: waiting for a worker; mid-step: the step in flight
   * past that stage (controller, Redis, policy server); late: after the last step (during the evaluation)
   */
  landed: 'mid-job' | 'queued' | 'mid-step' | 'late' | 'not-injected';
  /** the restart after it brought the process (or Redis) back */
  recovered: boolean;
  restartMs: number;
}

export interface RunOutcome {
  runId: string;
  result: RunResult | null;
  faults: InjectedFault[];
  /** the run did not complete: why */
  error: string | null;
  /** its own checks (exactly `steps` optimizer steps, no rollout twice, the window) */
  problems: string[];
  /** against the clean run (empty: identical) */
  differences: string[];
  wallSeconds: number;
}

export interface RunOptions {
  runId: string;
  outDir: string;
  steps: number;
  evalItems: number;
  faults: readonly Fault[];
  /** the clean run's result, to compare with */
  clean?: RunResult;
  timeoutMs?: number;
  log?: (line: string) => void;
}

type JobState = 'active' | 'queued' | 'gone';

async function jobState(admin: Redis, prefix: string, queue: QueueName, jobId: string): Promise<JobState> {
  const [active, waiting, delayed] = await Promise.all([
    admin.lpos(`${prefix}:${queue}:active`, jobId),
    admin.lpos(`${prefix}:${queue}:wait`, jobId),
    admin.zscore(`${prefix}:${queue}:delayed`, jobId),
  ]);
  if (active !== null) return 'active';
  return waiting !== null || delayed !== null ? 'queued' : 'gone';
}

/** targets whose fault must land while their own stage's job is there */
const STAGE_BOUND: ReadonlySet<string> = new Set(['sampler', 'grader', 'advantage', 'trainer']);

/** faults in flight at once at most (on different targets; one at a time per target) */
const MAX_CONCURRENT_FAULTS = 2;

export async function executeRun(stack: ChaosStack, o: RunOptions): Promise<RunOutcome> {
  const started = Date.now();
  const log = o.log ?? (() => undefined);
  const admin = new Redis(stack.redis.url, { maxRetriesPerRequest: 1, enableOfflineQueue: false, retryStrategy: () => 100 });
  admin.on('error', () => undefined);
  const ledger = new RedisTrainerStepLedger(admin, stack.prefix);
  const holdFile = path.join(o.outDir, 'faults-done');
  const env = {
    ...stack.serviceEnv(),
    CHAOS_RUN_ID: o.runId,
    CHAOS_OUT: o.outDir,
    CHAOS_STEPS: String(o.steps),
    CHAOS_EVAL_ITEMS: String(o.evalItems),
    CHAOS_HOLD_FILE: holdFile,
    ...(stack.opts.model === 'embedded' ? { CHAOS_BASE_MODEL: EMBEDDED_BASE_MODEL } : {}),
  };
  const startController = (): Promise<ManagedProcess> =>
    launch({ name: 'chaos-controller', entry: 'tools/chaos/chaos-controller.process.ts', env, logFile: path.join(stack.logsDir, `controller-${o.runId}.log`), waitReady: false });

  type Pending = { fault: Fault; step: number; seenAt: number | null };
  const pending: Pending[] = o.faults.map((fault) => ({ fault, step: fault.step, seenAt: null }));
  const injected: InjectedFault[] = [];
  const inFlight = new Map<string, Promise<void>>();
  let controller = await startController();
  let controllerRestarting = false;
  let error: string | null = null;
  const deadline = started + (o.timeoutMs ?? 300_000);
  mkdirSync(o.outDir, { recursive: true });
  if (o.faults.length === 0) writeFileSync(holdFile, '');

  const fire = (p: Pending, landed: InjectedFault['landed']): void => {
    const t0 = Date.now();
    log(`  ${o.runId}: ${p.fault.target} at ${p.fault.arm} step ${p.step} (${p.fault.stage}, ${landed})`);
    const work = (async () => {
      let recovered = true;
      try {
        if (p.fault.target === 'redis') await stack.redis.restart('SIGKILL');
        else if (p.fault.target === 'controller') {
          controllerRestarting = true;
          await controller.kill('SIGKILL');
          controller = await startController();
          controllerRestarting = false;
        } else await stack.crash(p.fault.target);
      } catch (err) {
        recovered = false;
        log(`  ${o.runId}: restart after ${p.fault.target} failed: ${(err as Error).message}`);
      }
      injected.push({ fault: p.fault, step: p.step, landed, recovered, restartMs: Date.now() - t0 });
    })();
    inFlight.set(p.fault.target, work);
    void work.finally(() => inFlight.delete(p.fault.target));
  };

  try {
    for (;;) {
      if (pending.length === 0 && inFlight.size === 0 && !existsSync(holdFile)) writeFileSync(holdFile, '');
      if (!controllerRestarting && !controller.running()) {
        const exit = await controller.exited;
        if (!controllerRestarting) {
          if (exit.code !== 0) error = `the controller exited with ${exit.code ?? exit.signal}: ${controller.tail(800).trim().split('\n').slice(-3).join(' | ')}`;
          break;
        }
      }
      if (Date.now() > deadline) {
        error = `the run did not complete within ${Math.round((o.timeoutMs ?? 300_000) / 1000)} s`;
        break;
      }
      const now = Date.now();
      for (const p of [...pending]) {
        if (inFlight.size >= MAX_CONCURRENT_FAULTS) break;
        if (inFlight.has(p.fault.target) || (p.fault.target === 'controller' && controllerRestarting)) continue;
        try {
          if (p.step >= o.steps) {
            pending.splice(pending.indexOf(p), 1);
            fire(p, 'late');
            continue;
          }
          const jobId = jobIdFor({ runId: o.runId, arm: p.fault.arm, step: p.step }, p.fault.stage);
          const state = await jobState(admin, stack.prefix, QUEUE_OF_STAGE[p.fault.stage], jobId);
          if (state !== 'gone') p.seenAt ??= now;
          const committed = (await ledger.status({ runId: o.runId, arm: p.fault.arm })).committed >= p.step;
          if (p.seenAt !== null && now - p.seenAt >= p.fault.delayMs) {
            if (state !== 'gone') {
              pending.splice(pending.indexOf(p), 1);
              fire(p, state === 'active' ? 'mid-job' : 'queued');
              continue;
            }
            // a service's fault belongs to its stage; the others only need the step to be in flight
            if (!STAGE_BOUND.has(p.fault.target) && !committed) {
              pending.splice(pending.indexOf(p), 1);
              fire(p, 'mid-step');
              continue;
            }
          }
          if (state === 'gone' && (committed || (p.seenAt !== null && STAGE_BOUND.has(p.fault.target)))) {
            p.step++; // its stage (or step) finished before the fault could land: the next step
            p.seenAt = null;
          }
        } catch {
          // Redis restarting: look again
        }
      }
      await new Promise((r) => setTimeout(r, 5));
    }
    await Promise.all(inFlight.values());
    if (error) await controller.kill('SIGKILL');
    for (const p of pending.splice(0)) injected.push({ fault: p.fault, step: p.step, landed: 'not-injected', recovered: false, restartMs: 0 });
    const resultFile = path.join(o.outDir, 'result.json');
    const result = !error && existsSync(resultFile) ? (JSON.parse(readFileSync(resultFile, 'utf8')) as RunResult) : null;
    if (!result && !error) error = 'the controller exited without a result.json';
    const problems = result ? await runChecks(stack, admin, result) : [];
    const differences = result && o.clean ? compareRuns(o.clean, result) : [];
    const exits = stack.unexpectedExits();
    if (exits.length > 0) problems.push(...exits.map((e) => `a process exited on its own: ${e}`));
    return { runId: o.runId, result, faults: injected, error, problems, differences, wallSeconds: (Date.now() - started) / 1000 };
  } finally {
    await Promise.all(inFlight.values());
    if (controller.running()) await controller.kill('SIGKILL');
    admin.disconnect();
  }
}

/** the run's own checks, read on the backend's side and in Redis */
async function runChecks(stack: ChaosStack, admin: Redis, result: RunResult): Promise<string[]> {
  const backendSteps: Record<string, number | null> = {};
  for (const [arm, a] of Object.entries(result.arms)) backendSteps[arm] = backendOptimizerSteps(a.final.statePath, stack.policyDataDir);
  const problems = checkRun(result, backendSteps);
  const windows = new RedisRolloutWindowStore(admin, stack.prefix);
  for (const arm of Object.keys(result.arms)) {
    const latest = await windows.latest({ runId: result.runId, arm });
    if (!latest || latest.step !== result.steps - 1) {
      problems.push(`${arm}: the window store's latest step is ${latest?.step ?? 'none'}, expected ${result.steps - 1}`);
      continue;
    }
    const ids = latest.window.rollouts.map((r) => r.rolloutId);
    if (new Set(ids).size !== ids.length) problems.push(`${arm}: the window holds a rollout twice`);
  }
  return problems;
}

