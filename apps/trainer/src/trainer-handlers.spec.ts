import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { UnrecoverableError } from 'bullmq';
import { charRenderer } from '@rx/backend';
import { jobIdFor, type TrainStep } from '@rx/contracts';
import { gradeCompletion } from '@rx/grading';
import { createRxMetrics, metricSamples } from '@rx/metrics';
import {
  computeAdvantages,
  gradeBatch,
  HashChainPolicyBackend,
  InMemoryRolloutWindowStore,
  InMemoryTrainerStepLedger,
  RecordingProducer,
  sampleBatch,
  StepLog,
  testStepRequest,
  TrainingClientPool,
} from '@rx/pipeline';
import { PrepareStepJobHandler } from './prepare-step-job.handler';
import { TrainJobHandler } from './train-job.handler';

describe('trainer processor logic', () => {
  let dir: string;
  let backend: HashChainPolicyBackend;
  let queues: RecordingProducer;
  let ledger: InMemoryTrainerStepLedger;
  let trainers: TrainingClientPool;
  let metrics: ReturnType<typeof createRxMetrics>;
  let prepare: PrepareStepJobHandler;
  let train: TrainJobHandler;

  beforeEach(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'rx-trainer-'));
    backend = new HashChainPolicyBackend();
    queues = new RecordingProducer();
    ledger = new InMemoryTrainerStepLedger();
    trainers = new TrainingClientPool(backend, ledger);
    metrics = createRxMetrics({ service: 'trainer', defaultMetrics: false });
    prepare = new PrepareStepJobHandler({ queues, metrics, ledger, trainers });
    train = new TrainJobHandler({ queues, metrics, ledger, trainers, stepLog: new StepLog(dir) });
  });
  afterEach(() => rm(dir, { recursive: true, force: true }));

  // step request -> (this handler) sample request -> the other stages in-process -> train payload
  async function trainPayloadFor(step: number): Promise<TrainStep> {
    const req = testStepRequest('run-tr', 'grpo_gs8', step);
    const out = await prepare.handle({ id: jobIdFor(req, 'prepare'), data: req, attemptsMade: 0 });
    expect(out).toMatchObject({ outcome: 'ready', next: jobIdFor(req, 'sample') });
    const sampleReq = queues.on('sample-requests').at(-1)!.payload;
    const sampled = await sampleBatch(sampleReq, { backend, renderer: charRenderer, concurrency: 8 });
    return computeAdvantages(gradeBatch(sampled, { renderer: charRenderer, grade: gradeCompletion }), { windows: new InMemoryRolloutWindowStore() });
  }

  it('prepare: saves the weights for sampling and asks the sampler for the step', async () => {
    await trainPayloadFor(0);
    const [job] = queues.on('sample-requests');
    expect(job.jobId).toBe('run-tr-grpo_gs8-0-sample');
    expect(job.payload.samplerPath).toMatch(/^memory:\/\/hash-chain\//);
    expect(backend.calls.saveWeightsForSampler).toBe(1);
  });

  it('train: applies the step, logs it, emits step-complete and counts it', async () => {
    const payload = await trainPayloadFor(0);
    const out = await train.handle({ id: jobIdFor(payload, 'train'), data: payload, attemptsMade: 0 });
    expect(out).toMatchObject({ outcome: 'applied', step: 0 });
    const [event] = queues.on('step-events');
    expect(event.jobId).toBe('run-tr-grpo_gs8-0-complete');
    expect(event.payload).toMatchObject({ kind: 'step-complete', outcome: 'applied', step: 0 });
    expect(event.payload.record.rollouts).toHaveLength(64);
    const lines = (await readFile(path.join(dir, 'run-tr', 'grpo_gs8', 'steps.jsonl'), 'utf8')).trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(JSON.parse(lines[0])).toEqual(event.payload.record);
    expect(await metricSamples(metrics.registry, 'rx_steps_committed_total')).toEqual([{ metricName: undefined, labels: { arm: 'grpo_gs8' }, value: 1 }]);
    expect((await metricSamples(metrics.registry, 'rx_step_loss'))[0].value).toBe(event.payload.record.loss);
  });

  it('train: a redelivered job is skipped, re-emits the same event id, and logs nothing twice', async () => {
    const payload = await trainPayloadFor(0);
    await train.handle({ id: 'j', data: payload, attemptsMade: 0 });
    const again = await train.handle({ id: 'j', data: payload, attemptsMade: 1 });
    expect(again).toMatchObject({ outcome: 'skipped', step: 0 });
    const events = queues.on('step-events');
    expect(events.map((e) => [e.jobId, e.payload.outcome])).toEqual([
      ['run-tr-grpo_gs8-0-complete', 'applied'],
      ['run-tr-grpo_gs8-0-complete', 'skipped'],
    ]);
    expect(events[1].payload.record).toEqual(events[0].payload.record);
    expect(backend.calls.optimStep).toBe(1);
    expect((await new StepLog(dir).read('run-tr', 'grpo_gs8')).length).toBe(1);
    expect((await metricSamples(metrics.registry, 'rx_steps_committed_total'))[0].value).toBe(1);
  });

  it('train: a step left in doubt by a failed attempt is taken over by the retry, redone from the committed state, logged once', async () => {
    const payload = await trainPayloadFor(0);
    backend.failNext.optimStep = new Error('socket hang up');
    const logged: Array<[string, Record<string, unknown>]> = [];
    const handler = new TrainJobHandler({ queues, metrics, ledger, trainers, stepLog: new StepLog(dir), log: (e, f) => logged.push([e, f]) });
    await expect(handler.handle({ id: 'j', data: payload, attemptsMade: 0 })).rejects.toThrow('socket hang up');
    const retry = await handler.handle({ id: 'j', data: payload, attemptsMade: 1 });
    expect(retry).toMatchObject({ outcome: 'applied', step: 0, tookOver: { phase: 'optim_step' } });
    expect(retry.tookOver?.token).toMatch(/^j:0:/);
    expect(logged).toEqual([['step-taken-over', expect.objectContaining({ runId: 'run-tr', arm: 'grpo_gs8', step: 0 })]]);
    expect(queues.deadLetters).toEqual([]);
    expect(queues.on('step-events').map((e) => e.payload.outcome)).toEqual(['applied']);
    expect((await new StepLog(dir).read('run-tr', 'grpo_gs8')).length).toBe(1);
    expect((await ledger.status(payload)).statePath).toMatch(/\/1$/); // one optimizer step on the lineage
  });

  it('train: the last attempt of a step that keeps failing is dead-lettered with the reason', async () => {
    const payload = await trainPayloadFor(0);
    backend.failNext.forwardBackward = new Error('backend unavailable');
    await expect(train.handle({ id: 'j', data: payload, attemptsMade: 2, opts: { attempts: 3 } })).rejects.toBeInstanceOf(UnrecoverableError);
    expect(queues.deadLetters).toHaveLength(1);
    expect(queues.deadLetters[0]).toMatchObject({ sourceQueue: 'train-steps', sourceJobId: 'j', reason: 'unrecoverable' });
    expect(queues.deadLetters[0].error).toBe('train of job j gave up after 3 attempts: backend unavailable');
    expect((await metricSamples(metrics.registry, 'rx_dead_letters_total'))[0]).toMatchObject({ labels: { queue: 'train-steps' }, value: 1 });
  });

  it('train: step 1 before step 0 is committed is not applied (strict order per arm)', async () => {
    const p0 = await trainPayloadFor(0);
    const p1 = { ...p0, step: 1, rollouts: p0.rollouts.map((r, i) => ({ ...r, rolloutId: `1-${i}` })) };
    await expect(train.handle({ id: 'early', data: p1, attemptsMade: 0 })).rejects.toThrow(/arrived before step 0 was committed/);
    expect(backend.calls.forwardBackward).toBe(0);
    expect(queues.deadLetters).toEqual([]);
  });
});
