// The whole pipeline on the real Redis: sampler, grader, advantage and trainer as four child processes, each
// started through its test entry point (apps/<svc>/testing/hash-chain.main.ts: the service's own start function over
// the deterministic hash-chain test policy), this test as the controller. Two runs of two steps of both arms: run B uninterrupted, run A with the advantage
// service killed (SIGKILL) and restarted between its steps, and a malformed job thrown in.
import { Worker, type Job } from 'bullmq';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { jobIdFor, QUEUE_CATALOG, stepCompleteOrThrow, type StepComplete as StepEvent, type StepRecord } from '@rx/contracts';
import { appendToWindow, emptyWindow, groupMeanAdvantages, kernelBaseline, type ScoredRollout } from '@rx/estimators';
import { parseExposition } from '@rx/metrics/testing';
import { testStepRequest, type TestArm } from '@rx/pipeline/testing';
import { createRedisHarness } from '@rx/queue/testing';
import { QueueRepository, RedisRolloutWindowStore, RedisTrainerStepLedger } from '@rx/queue';
import { startServiceProcess, type ServiceProcess } from './service-process';
import { hashChainEntry } from '@rx/local-stack/testing';

jest.setTimeout(60_000);

const ARMS: TestArm[] = ['grpo_gs8', 'gs1_kernel'];
const harness = createRedisHarness('e2e');
const connections = harness.connections();
const queues = new QueueRepository({ connections, prefix: harness.prefix });
const events = new Map<string, StepEvent>();
const waiters = new Map<string, (e: StepEvent) => void>();
let controller: Worker;
let dataDir: string;
let env: Record<string, string>;
const services: Record<string, ServiceProcess> = {};

const key = (runId: string, arm: string, step: number) => `${runId}/${arm}/${step}`;

function stepComplete(runId: string, arm: string, step: number, timeoutMs = 20_000): Promise<StepEvent> {
  const k = key(runId, arm, step);
  const seen = events.get(k);
  if (seen) return Promise.resolve(seen);
  return new Promise((resolve, reject) => {
    const t = setTimeout(() => {
      const logs = Object.values(services).map((s) => `--- ${s.name}\n${s.output().slice(-3000)}`).join('\n');
      reject(new Error(`no step-complete for ${k} within ${timeoutMs} ms\n${logs}`));
    }, timeoutMs);
    waiters.set(k, (e) => {
      clearTimeout(t);
      resolve(e);
    });
  });
}

async function runStep(runId: string, step: number): Promise<StepEvent[]> {
  await Promise.all(ARMS.map((arm) => { const req = testStepRequest(runId, arm, step); return queues.enqueue('step-requests', req, jobIdFor(req, 'prepare')); }));
  return Promise.all(ARMS.map((arm) => stepComplete(runId, arm, step)));
}

const scored = (r: StepRecord): ScoredRollout[] => r.rollouts.map((x) => ({ rolloutId: x.rolloutId, step: r.step, promptId: x.promptId, reward: x.reward, phi: [x.phi[0], x.phi[1]] as const }));
const comparable = (r: StepRecord) => ({ ...r, runId: '', committedAt: '', timings: {} });

beforeAll(async () => {
  dataDir = await mkdtemp(path.join(tmpdir(), 'rx-e2e-'));
  env = { REDIS_URL: harness.url, RX_ALLOW_INSECURE_REDIS: '1', RX_BACKEND_URL: 'memory://hash-chain', RX_QUEUE_PREFIX: harness.prefix, RX_DATA_DIR: dataDir, RX_CONCURRENCY: '8', PORT: '0' };
  // the test is the controller: it consumes step-events
  controller = new Worker(
    'step-events',
    async (job: Job) => {
      const e = stepCompleteOrThrow(QUEUE_CATALOG['step-events'].schema.parse(job.data));
      const k = key(e.runId, e.arm, e.step);
      events.set(k, e);
      waiters.get(k)?.(e);
    },
    { connection: connections.worker(), prefix: harness.prefix },
  );
  const started = await Promise.allSettled(['sampler', 'grader', 'advantage', 'trainer'].map((s) => startServiceProcess(s, env, hashChainEntry(s))));
  for (const s of started) if (s.status === 'fulfilled') services[s.value.name] = s.value; // afterAll stops these
  const failed = started.find((s): s is PromiseRejectedResult => s.status === 'rejected');
  if (failed) throw failed.reason;
});

afterAll(async () => {
  const codes = await Promise.all(Object.values(services).map(async (s) => [s.name, await s.stop()] as const));
  await controller?.close();
  await queues.close();
  await harness.close();
  await rm(dataDir, { recursive: true, force: true });
  // graceful shutdown on SIGTERM: every service closed its workers, queues and connections and exited 0
  expect(Object.fromEntries(codes)).toEqual({ sampler: 0, grader: 0, advantage: 0, trainer: 0 });
});

describe('the rollout pipeline over BullMQ on Redis', () => {
  const recordsB: Record<string, StepRecord[]> = { grpo_gs8: [], gs1_kernel: [] };
  const recordsA: Record<string, StepRecord[]> = { grpo_gs8: [], gs1_kernel: [] };

  it('every service answers /health once up', async () => {
    for (const s of Object.values(services)) {
      const r = await fetch(`${s.url}/health`);
      expect([s.name, r.status]).toEqual([s.name, 200]);
    }
  });

  it('run B: two steps of both arms, side by side; the trainer receives exactly 64 rollouts a step', async () => {
    for (const step of [0, 1]) {
      for (const e of await runStep('run-b', step)) {
        expect(e.outcome).toBe('applied');
        expect(e.record.rollouts).toHaveLength(64);
        expect(e.record.datums).toBe(64);
        recordsB[e.arm].push(e.record);
      }
    }
  });

  it('advantages are the estimators applied to the same rewards (group mean; kernel against the window)', () => {
    for (const r of recordsB.grpo_gs8) {
      expect(r.rollouts.map((x) => x.advantage)).toEqual(groupMeanAdvantages(scored(r)).map((a) => a.advantage));
      expect(r.gate.executedGroupSize).toBe(8);
    }
    const [k0, k1] = recordsB.gs1_kernel;
    expect(k0.rollouts.map((x) => x.advantage)).toEqual(kernelBaseline(scored(k0), [], { bandwidth: 0.5, windowSize: 256 }).map((a) => a.advantage));
    const window0 = appendToWindow(emptyWindow(256), scored(k0));
    expect(k1.rollouts.map((x) => x.advantage)).toEqual(kernelBaseline(scored(k1), window0.rollouts, { bandwidth: 0.5, windowSize: 256 }).map((a) => a.advantage));
    expect(k1.gate.executedGroupSize).toBe(1);
    const rewards = new Set([...recordsB.grpo_gs8, ...recordsB.gs1_kernel].flatMap((r) => r.rollouts.map((x) => x.reward)));
    expect(rewards.size).toBeGreaterThanOrEqual(3); // varied rewards: a real check, not all-zero advantages
  });

  it('run A: the advantage service killed and restarted between steps; a malformed job dead-lettered; the steps still complete', async () => {
    for (const e of await runStep('run-a', 0)) recordsA[e.arm].push(e.record);

    await services.advantage.kill();
    services.advantage = await startServiceProcess('advantage', env, hashChainEntry('advantage'));

    // a job no producer could have written: the grader dead-letters it and keeps going
    await queues.queue('rollouts').add('grade', { runId: 'run-a', arm: 'gs1_kernel', step: 1, rollouts: 'not a batch' }, { jobId: 'malformed-1' });
    for (const e of await runStep('run-a', 1)) {
      expect(e.outcome).toBe('applied');
      expect(e.record.rollouts).toHaveLength(64);
      recordsA[e.arm].push(e.record);
    }
    const dead = await queues.queue('dead-letters').getJob('rollouts-malformed-1-dead');
    expect(dead?.data).toMatchObject({ sourceQueue: 'rollouts', sourceJobId: 'malformed-1', reason: 'invalid-payload' });
    expect((dead?.data as { issues: Array<{ path: string }> }).issues.map((i) => i.path)).toEqual(expect.arrayContaining(['plan', 'rollouts']));
    const failed = await queues.queue('rollouts').getJob('malformed-1');
    expect(await failed?.getState()).toBe('failed');
    expect(failed?.attemptsMade).toBe(1); // UnrecoverableError: never retried
    const grader = parseExposition(await (await fetch(`${services.grader.url}/metrics`)).text());
    expect(grader.get('rx_dead_letters_total')!.metrics).toEqual([{ labels: { queue: 'rollouts', service: 'grader' }, value: '1' }]);
  });

  it('the window after the restart is identical to the uninterrupted run, and so is every step', async () => {
    const store = new RedisRolloutWindowStore(connections.producer(), harness.prefix);
    for (const arm of ARMS) {
      const a = await store.latest({ runId: 'run-a', arm });
      const b = await store.latest({ runId: 'run-b', arm });
      expect(a?.step).toBe(1);
      expect(a?.window.rollouts).toHaveLength(128);
      expect(a).toEqual(b);
      expect(new Set(a!.window.rollouts.map((r) => r.rolloutId)).size).toBe(128);
      expect(recordsA[arm].map(comparable)).toEqual(recordsB[arm].map(comparable));
    }
  });

  it('a redelivered train job is skipped: the trainer applied 8 steps, each committed once with its record', async () => {
    const last = testStepRequest('run-a', 'gs1_kernel', 1);
    const job = (await queues.queue('train-steps').getJob(jobIdFor(last, 'train')))!;
    await job.remove();
    await queues.queue('step-events').getJob(jobIdFor(last, 'complete')).then((j) => j?.remove());
    events.delete(key('run-a', 'gs1_kernel', 1));
    await queues.queue('train-steps').add('train', job.data, { jobId: jobIdFor(last, 'train') });
    const replay = await stepComplete('run-a', 'gs1_kernel', 1);
    expect(replay.outcome).toBe('skipped');
    expect(replay.record).toEqual(recordsA.gs1_kernel[1]);

    const trainer = parseExposition(await (await fetch(`${services.trainer.url}/metrics`)).text());
    const committed = Object.fromEntries(trainer.get('rx_steps_committed_total')!.metrics.map((m) => [m.labels!.arm, Number(m.value)]));
    expect(committed).toEqual({ grpo_gs8: 4, gs1_kernel: 4 });
    const ledger = new RedisTrainerStepLedger(connections.producer(), harness.prefix);
    for (const runId of ['run-a', 'run-b']) for (const arm of ARMS) expect((await ledger.status({ runId, arm })).committed).toBe(1);
    for (const arm of ARMS) for (const step of [0, 1]) expect(await ledger.record({ runId: 'run-a', arm }, step)).toEqual(recordsA[arm][step]);
  });
});
