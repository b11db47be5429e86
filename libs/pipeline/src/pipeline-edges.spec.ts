// The graph's stage functions run by the edge runner, one edge at a time, on a recording transport: what each
// edge sends on, under which job id, what it counts, and what it dead-letters.
import { CHAR_EOS, charRenderer } from '@rx/backend';
import { HashChainPolicyBackend } from '@rx/backend/testing';
import { jobIdFor, type GradedBatch, type SampledBatch, type StageName, type TrainStep } from '@rx/contracts';
import { appendToWindow, emptyWindow, kernelBaseline } from '@rx/estimators';
import { gradeCompletion } from '@rx/grading';
import { createRxMetrics, metricSamples } from '@rx/metrics';
import { runEdge, type ConsumedJob } from './edge-runner';
import { edgeOfStage, type EdgeOfService, type PipelineService, type StageDeps } from './pipeline-graph';
import { InMemoryRolloutWindowStore } from './rollout-window.store';
import { DeadLetteredError } from './stage-errors';
import { computeAdvantages, scoredRollouts } from './stages/advantage.stage';
import { gradeBatch } from './stages/grade.stage';
import { sampleBatch } from './stages/sample.stage';
import { InMemoryTrainerStepLedger } from './trainer-step.ledger';
import { TrainingClientPool } from './training-client.pool';
import { RecordingProducer, testStepRequest } from '@rx/pipeline/testing';

/** one edge of `service` run on a recording transport with fresh metrics */
function edgeHarness<S extends PipelineService>(service: S, deps: StageDeps[S]) {
  const queues = new RecordingProducer();
  const metrics = createRxMetrics({ service: service === 'controller' ? 'trainer' : service, defaultMetrics: false });
  const run = (stage: StageName, job: ConsumedJob) => {
    const edge = edgeOfStage(stage);
    if (edge.service !== service) throw new Error(`stage ${stage} is not ${service}'s`);
    return runEdge(edge as EdgeOfService<S>, job, { queues, deps, metrics });
  };
  return { queues, metrics, run };
}

describe('sample edge (sampler)', () => {
  async function setup(concurrency = 4) {
    const backend = new HashChainPolicyBackend({ latencyMs: 2 });
    const h = edgeHarness('sampler', { backend, renderers: async () => charRenderer, concurrency });
    const req = testStepRequest('run-1', 'gs1_kernel', 2);
    const client = await backend.createLoraTrainingClient(req.lora);
    const sample = { runId: req.runId, arm: req.arm, step: req.step, plan: req.plan, samplerPath: await client.saveWeightsForSampler('w'), prompts: req.prompts };
    return { backend, sample, ...h };
  }

  it('samples the batch through the backend and enqueues it for the grader under <run>-<arm>-<step>-grade', async () => {
    const { backend, queues, metrics, run, sample } = await setup(4);
    expect(await run('sample', { id: 'run-1-gs1_kernel-2-sample', data: sample, attemptsMade: 0 })).toEqual({ outcome: 'sent', next: 'run-1-gs1_kernel-2-grade' });
    const [job] = queues.on('rollouts');
    expect(job.jobId).toBe('run-1-gs1_kernel-2-grade');
    expect(job.payload.rollouts).toHaveLength(64);
    expect(job.payload.rollouts[5].rolloutId).toBe('2-5');
    expect(backend.calls.maxInFlight).toBe(4); // RX_CONCURRENCY bounds the fan-out
    expect(await metricSamples(metrics.registry, 'rx_rollouts_processed_total')).toEqual([{ metricName: undefined, labels: { stage: 'sample', arm: 'gs1_kernel' }, value: 64 }]);
  });

  it('keeps the chain suffix of a step requested again after its chain died (-a<attempt>) on the job it sends on', async () => {
    const { queues, run, sample } = await setup(4);
    expect(await run('sample', { id: 'run-1-gs1_kernel-2-sample-a3', data: sample, attemptsMade: 0 })).toEqual({ outcome: 'sent', next: 'run-1-gs1_kernel-2-grade-a3' });
    expect(queues.on('rollouts').map((j) => j.jobId)).toEqual(['run-1-gs1_kernel-2-grade-a3']);
  });

  it('dead-letters a malformed request without calling the backend, and reports its step failed', async () => {
    const { backend, queues, run, sample } = await setup();
    const id = 'run-1-gs1_kernel-2-sample';
    await expect(run('sample', { id, data: { ...sample, samplerPath: '' }, attemptsMade: 0 })).rejects.toBeInstanceOf(DeadLetteredError);
    expect(queues.deadLetters[0]).toMatchObject({ sourceQueue: 'sample-requests', issues: [{ path: 'samplerPath' }] });
    expect(queues.on('rollouts')).toEqual([]);
    expect(backend.calls.sample).toBe(0);
    const [failed] = queues.on('step-events');
    expect(failed.payload).toMatchObject({ kind: 'step-failed', runId: 'run-1', arm: 'gs1_kernel', step: 2, stage: 'sample', deadLetterJobId: `sample-requests-${id}-dead` });
    expect(failed.jobId).toMatch(/^run-1-gs1_kernel-2-sample-failed-\d+$/);
  });

  it('lets a backend failure through for a retry (no dead letter)', async () => {
    const { backend, queues, run, sample } = await setup();
    await backend.close();
    await expect(run('sample', { id: 'j', data: sample, attemptsMade: 0 })).rejects.toThrow('backend closed');
    expect(queues.deadLetters).toEqual([]);
    expect(queues.on('step-events')).toEqual([]);
  });
});

describe('grade edge (grader)', () => {
  function sampled(): SampledBatch {
    const req = testStepRequest('run-g', 'grpo_gs8', 0);
    const texts = ['\\boxed{X}', '\\boxed{0}', 'X', '\\boxed{X}'];
    return {
      runId: req.runId,
      arm: req.arm,
      step: 0,
      plan: req.plan,
      samplerPath: 'memory://w',
      prompts: req.prompts.map((p) => ({ promptId: p.promptId, tokens: charRenderer.buildPrompt(p.question), answer: p.answer })),
      rollouts: req.prompts.flatMap((p, i) => {
        const sum = p.answer.split('#### ')[1];
        return Array.from({ length: 8 }, (_, j) => {
          const text = texts[j % 4].replace('X', sum);
          const stop = j % 4 !== 3;
          const tokens = [...charRenderer.encode(text), ...(stop ? [CHAR_EOS] : [])];
          return { rolloutId: `0-${i * 8 + j}`, promptId: p.promptId, tokens, logprobs: tokens.map(() => -1), stopReason: stop ? ('stop' as const) : ('length' as const), phi: [2, -1] as [number, number] };
        });
      }),
      timings: { sample: 3 },
    };
  }
  const harness = () => edgeHarness('grader', { renderers: async () => charRenderer, grade: gradeCompletion });

  it('scores every completion with the cookbook reward and enqueues the batch for the advantage service', async () => {
    const { queues, run } = harness();
    expect(await run('grade', { id: 'run-g-grpo_gs8-0-grade', data: sampled(), attemptsMade: 0 })).toEqual({ outcome: 'sent', next: 'run-g-grpo_gs8-0-advantage' });
    const [job] = queues.on('graded-rollouts');
    expect(job.jobId).toBe('run-g-grpo_gs8-0-advantage');
    expect(job.payload.rollouts.slice(0, 4).map((r) => r.reward)).toEqual([1, 0, -0.1, 0.9]);
  });

  it('dead-letters a batch that is not complete (63 of 64 rollouts)', async () => {
    const { queues, run } = harness();
    const batch = sampled();
    batch.rollouts.pop();
    await expect(run('grade', { id: 'run-g-grpo_gs8-0-grade', data: batch, attemptsMade: 0 })).rejects.toBeInstanceOf(DeadLetteredError);
    expect(queues.deadLetters[0].error).toMatch(/expected 64 rollouts \(8 prompts x group size 8\), got 63/);
    expect(queues.on('graded-rollouts')).toEqual([]);
    expect(queues.on('step-events').map((e) => e.payload)).toMatchObject([{ kind: 'step-failed', runId: 'run-g', arm: 'grpo_gs8', step: 0, stage: 'grade' }]);
  });
});

describe('advantage edge', () => {
  function graded(step: number): GradedBatch {
    const req = testStepRequest('run-k', 'gs1_kernel', step);
    return {
      runId: req.runId,
      arm: req.arm,
      step,
      plan: req.plan,
      samplerPath: 'memory://w',
      prompts: req.prompts.map((p) => ({ promptId: p.promptId, tokens: [1, 2, 3] })),
      rollouts: req.prompts.map((p, i) => {
        const reward = [1, 0, -0.1, 0.9][(i * 5 + step) % 4];
        return { rolloutId: `${step}-${i}`, promptId: p.promptId, tokens: [4], logprobs: [-1], stopReason: 'stop' as const, phi: [Math.log(30 + (i % 9)), -1 - (i % 7) / 5] as [number, number], reward, correct: reward > 0.5, formatOk: reward >= 0 };
      }),
      timings: {},
    };
  }
  function setup() {
    const windows = new InMemoryRolloutWindowStore();
    return { windows, ...edgeHarness('advantage', { windows }) };
  }

  it('applies the kernel against the kept window and enqueues the train step with gate metrics', async () => {
    const { queues, metrics, windows, run } = setup();
    await run('advantage', { id: 'a0', data: graded(0), attemptsMade: 0 });
    await run('advantage', { id: 'a1', data: graded(1), attemptsMade: 0 });
    const jobs = queues.on('train-steps');
    expect(jobs.map((j) => j.jobId)).toEqual(['run-k-gs1_kernel-0-train', 'run-k-gs1_kernel-1-train']);
    const window0 = appendToWindow(emptyWindow(256), scoredRollouts(graded(0)));
    const expected = kernelBaseline(scoredRollouts(graded(1)), window0.rollouts, { bandwidth: 0.5, windowSize: 256 });
    expect(jobs[1].payload.rollouts.map((r) => r.baseline)).toEqual(expected.map((a) => a.baseline));
    expect(jobs[1].payload.gate.executedGroupSize).toBe(1);
    expect((await windows.latest({ runId: 'run-k', arm: 'gs1_kernel' }))!.window.rollouts).toHaveLength(128);
    // the gate metrics travel in the payload; the step gauges are the controller's to set
    expect(await metricSamples(metrics.registry, 'rx_step_nonzero_advantage_ratio')).toEqual([]);
  });

  it('a redelivered job (after a crash past the window commit) yields the same train step', async () => {
    const { queues, run } = setup();
    await run('advantage', { id: 'a0', data: graded(0), attemptsMade: 0 });
    await run('advantage', { id: 'a1', data: graded(1), attemptsMade: 0 });
    await run('advantage', { id: 'a1', data: graded(1), attemptsMade: 1 });
    const [, first, again] = queues.on('train-steps');
    expect(again.jobId).toBe(first.jobId);
    expect({ ...again.payload, timings: {} }).toEqual({ ...first.payload, timings: {} });
  });

  it('dead-letters a graded batch with a non-finite reward', async () => {
    const { queues, run } = setup();
    const bad = graded(0) as unknown as { rollouts: Array<{ reward: unknown }> };
    bad.rollouts[3].reward = 'high';
    await expect(run('advantage', { id: 'bad', data: bad, attemptsMade: 0 })).rejects.toBeInstanceOf(DeadLetteredError);
    expect(queues.deadLetters[0].issues).toEqual([{ path: 'rollouts.3.reward', message: 'Expected number, received string' }]);
  });
});

describe('prepare and train edges (trainer)', () => {
  let backend: HashChainPolicyBackend;
  let ledger: InMemoryTrainerStepLedger;
  let logged: Array<[string, Record<string, unknown>]>;
  let h: ReturnType<typeof edgeHarness<'trainer'>>;

  beforeEach(async () => {
    backend = new HashChainPolicyBackend();
    ledger = new InMemoryTrainerStepLedger();
    logged = [];
    h = edgeHarness('trainer', { ledger, trainers: new TrainingClientPool(backend, ledger), log: (e, f) => logged.push([e, f]) });
  });

  // step request -> (the prepare edge) sample request -> the other stages in-process -> train payload
  async function trainPayloadFor(step: number): Promise<TrainStep> {
    const req = testStepRequest('run-tr', 'grpo_gs8', step);
    expect(await h.run('prepare', { id: jobIdFor(req, 'prepare'), data: req, attemptsMade: 0 })).toEqual({ outcome: 'sent', next: jobIdFor(req, 'sample') });
    const sampleReq = h.queues.on('sample-requests').at(-1)!.payload;
    const sampled = await sampleBatch(sampleReq, { backend, renderer: charRenderer, concurrency: 8 });
    return computeAdvantages(gradeBatch(sampled, { renderer: charRenderer, grade: gradeCompletion }), { windows: new InMemoryRolloutWindowStore() });
  }

  it('prepare: saves the weights for sampling and asks the sampler for the step', async () => {
    await trainPayloadFor(0);
    const [job] = h.queues.on('sample-requests');
    expect(job.jobId).toBe('run-tr-grpo_gs8-0-sample');
    expect(job.payload.samplerPath).toMatch(/^memory:\/\/hash-chain\//);
    expect(backend.calls.saveWeightsForSampler).toBe(1);
  });

  it('prepare: a step already committed is skipped with the reason, sends nothing on, and each attempt is counted by its outcome', async () => {
    const payload = await trainPayloadFor(0);
    await h.run('train', { id: 't', data: payload, attemptsMade: 0 });
    const req = testStepRequest('run-tr', 'grpo_gs8', 0);
    expect(await h.run('prepare', { id: 'again', data: req, attemptsMade: 0 })).toEqual({ outcome: 'skipped', reason: 'step 0 is committed or in training (committed: 0)' });
    expect(h.queues.on('sample-requests')).toHaveLength(1);
    const attempts = (await metricSamples(h.metrics.registry, 'rx_job_attempts_total')).map((m) => [m.labels.queue, m.labels.outcome, m.value]);
    expect(attempts).toEqual([
      ['step-requests', 'sent', 1],
      ['train-steps', 'sent', 1],
      ['step-requests', 'skipped', 1],
    ]);
  });

  it('train: applies the step, keeps its record in the ledger, emits step-complete and counts it', async () => {
    const payload = await trainPayloadFor(0);
    expect(await h.run('train', { id: jobIdFor(payload, 'train'), data: payload, attemptsMade: 0 })).toEqual({ outcome: 'sent', next: 'run-tr-grpo_gs8-0-complete' });
    const [event] = h.queues.on('step-events');
    expect(event.jobId).toBe('run-tr-grpo_gs8-0-complete');
    if (event.payload.kind !== 'step-complete') throw new Error('expected step-complete');
    expect(event.payload).toMatchObject({ outcome: 'applied', step: 0 });
    expect(event.payload.record.rollouts).toHaveLength(64);
    expect(await ledger.record({ runId: 'run-tr', arm: 'grpo_gs8' }, 0)).toEqual(event.payload.record);
    expect(await metricSamples(h.metrics.registry, 'rx_steps_committed_total')).toEqual([{ metricName: undefined, labels: { arm: 'grpo_gs8' }, value: 1 }]);
    // the step gauges are the controller's to set (once, from the record it logs), not the trainer's
    expect(await metricSamples(h.metrics.registry, 'rx_step_loss')).toEqual([]);
  });

  it('train: a redelivered job is skipped, re-emits the same event id with the committed record, and commits nothing twice', async () => {
    const payload = await trainPayloadFor(0);
    await h.run('train', { id: 'j', data: payload, attemptsMade: 0 });
    await h.run('train', { id: 'j', data: payload, attemptsMade: 1 });
    const events = h.queues.on('step-events').map((e) => ({ jobId: e.jobId, ...(e.payload.kind === 'step-complete' ? e.payload : { outcome: 'failed', record: null }) }));
    expect(events.map((e) => [e.jobId, e.outcome])).toEqual([
      ['run-tr-grpo_gs8-0-complete', 'applied'],
      ['run-tr-grpo_gs8-0-complete', 'skipped'],
    ]);
    expect(events[1].record).toEqual(events[0].record);
    expect(backend.calls.optimStep).toBe(1);
    expect((await ledger.status({ runId: 'run-tr', arm: 'grpo_gs8' })).committed).toBe(0);
    expect((await metricSamples(h.metrics.registry, 'rx_steps_committed_total'))[0].value).toBe(1);
  });

  it('train: a step left in doubt by a failed attempt is taken over by the retry, redone from the committed state, announced once', async () => {
    const payload = await trainPayloadFor(0);
    backend.failNext.optimStep = new Error('socket hang up');
    await expect(h.run('train', { id: 'j', data: payload, attemptsMade: 0 })).rejects.toThrow('socket hang up');
    await h.run('train', { id: 'j', data: payload, attemptsMade: 1 });
    expect(logged).toEqual([['step-taken-over', expect.objectContaining({ runId: 'run-tr', arm: 'grpo_gs8', step: 0, from: expect.objectContaining({ phase: 'optim_step' }) })]]);
    expect((logged[0][1].from as { token: string }).token).toMatch(/^j:0:/);
    expect(h.queues.deadLetters).toEqual([]);
    expect(h.queues.on('step-events').map((e) => e.payload.kind === 'step-complete' && e.payload.outcome)).toEqual(['applied']);
    expect((await metricSamples(h.metrics.registry, 'rx_job_attempts_total')).filter((m) => m.labels.queue === 'train-steps').map((m) => [m.labels.outcome, m.value])).toEqual([
      ['failed', 1],
      ['sent', 1],
    ]);
    expect((await ledger.status(payload)).committed).toBe(0);
    expect((await ledger.status(payload)).statePath).toMatch(/\/1$/); // one optimizer step on the lineage
  });

  it('train: the last attempt of a step that keeps failing is dead-lettered with the reason, and the step reported failed', async () => {
    const payload = await trainPayloadFor(0);
    backend.failNext.forwardBackward = new Error('backend unavailable');
    await expect(h.run('train', { id: 'j', data: payload, attemptsMade: 2, opts: { attempts: 3 } })).rejects.toBeInstanceOf(DeadLetteredError);
    expect(h.queues.deadLetters).toHaveLength(1);
    expect(h.queues.deadLetters[0]).toMatchObject({ sourceQueue: 'train-steps', sourceJobId: 'j', reason: 'unrecoverable' });
    expect(h.queues.deadLetters[0].error).toBe('train of job j gave up after 3 attempts: backend unavailable');
    expect((await metricSamples(h.metrics.registry, 'rx_dead_letters_total'))[0]).toMatchObject({ labels: { queue: 'train-steps' }, value: 1 });
    expect((await metricSamples(h.metrics.registry, 'rx_job_attempts_total')).filter((m) => m.labels.queue === 'train-steps')).toMatchObject([{ labels: { outcome: 'dead_lettered' }, value: 1 }]);
    expect(h.queues.on('step-events').map((e) => e.payload)).toMatchObject([
      { kind: 'step-failed', runId: 'run-tr', arm: 'grpo_gs8', step: 0, stage: 'train', deadLetter: { error: 'train of job j gave up after 3 attempts: backend unavailable' } },
    ]);
  });

  it('train: step 1 before step 0 is committed is not applied (strict order per arm)', async () => {
    const p0 = await trainPayloadFor(0);
    const p1 = { ...p0, step: 1, rollouts: p0.rollouts.map((r, i) => ({ ...r, rolloutId: `1-${i}` })) };
    await expect(h.run('train', { id: 'early', data: p1, attemptsMade: 0 })).rejects.toThrow(/arrived before step 0 was committed/);
    expect(backend.calls.forwardBackward).toBe(0);
    expect(h.queues.deadLetters).toEqual([]);
  });
});

describe('complete edge (controller)', () => {
  it('hands the event to the controller and sends nothing on; an invalid event is dead-lettered without a step-failed event of its own', async () => {
    const delivered: unknown[] = [];
    const h = edgeHarness('controller', { deliver: (e) => void delivered.push(e) });
    const failed = {
      runId: 'r',
      arm: 'a',
      step: 1,
      kind: 'step-failed',
      stage: 'grade',
      deadLetterJobId: 'rollouts-r-a-1-grade-dead',
      deadLetter: { sourceQueue: 'rollouts', sourceJobId: 'r-a-1-grade', reason: 'unrecoverable', error: 'boom', receivedAt: '2026-12-03T00:00:00.000Z' },
    };
    expect(await h.run('complete', { id: 'e1', data: failed, attemptsMade: 0 })).toEqual({ outcome: 'delivered', reason: 'step-failed of step 1 handed to the controller' });
    expect(delivered).toEqual([failed]);
    await expect(h.run('complete', { id: 'r-a-2-complete', data: { ...failed, step: 2, kind: 'nonsense' }, attemptsMade: 0 })).rejects.toBeInstanceOf(DeadLetteredError);
    expect(h.queues.deadLetters).toHaveLength(1);
    expect(h.queues.on('step-events')).toEqual([]);
    expect(h.queues.jobs.map((j) => j.queue)).toEqual([]);
  });
});
