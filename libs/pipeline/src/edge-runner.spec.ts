import { createRxMetrics, metricSamples } from '@rx/metrics';
import { RecordingProducer, runStandInStage, testStepRequest } from '@rx/pipeline/testing';
import { DeadLetteredError, OutOfOrderStepError, StageTimeoutError, UnrecoverableStageError } from './stage-errors';

function deps() {
  const queues = new RecordingProducer();
  const metrics = createRxMetrics({ service: 'trainer', defaultMetrics: false });
  return { queues, metrics, now: () => Date.parse('2026-08-01T12:00:00Z') };
}

async function deadLettered(metrics: ReturnType<typeof createRxMetrics>, queue: string): Promise<number> {
  const v = (await metricSamples(metrics.registry, 'rx_dead_letters_total')).find((x) => x.labels.queue === queue);
  return v?.value ?? 0;
}

describe('runEdge around any stage', () => {
  it('hands the parsed payload to the stage and times it by stage and arm', async () => {
    const d = deps();
    const req = testStepRequest('r', 'gs1_kernel', 0);
    const out = await runStandInStage('step-requests', { id: 'j1', data: req, attemptsMade: 0 }, d, async (p) => p.prompts.length);
    expect(out).toBe(64);
    const h = await metricSamples(d.metrics.registry, 'rx_stage_duration_seconds');
    expect(h.find((v) => v.metricName === 'rx_stage_duration_seconds_count')?.labels).toMatchObject({ stage: 'prepare', arm: 'gs1_kernel' });
  });

  it('moves a malformed job to the dead-letter queue with the zod issues, counts it, and fails it without retry', async () => {
    const d = deps();
    let called = false;
    const bad = { ...testStepRequest('r', 'gs1_kernel', 0), step: -1, prompts: [] };
    const run = runStandInStage('step-requests', { id: 'j-bad', data: bad, attemptsMade: 0 }, d, async () => (called = true));
    await expect(run).rejects.toBeInstanceOf(DeadLetteredError);
    await expect(runStandInStage('step-requests', { id: 'j-bad', data: bad, attemptsMade: 0 }, d, async () => 1)).rejects.toThrow(
      "invalid 'step-requests' payload (job j-bad): step: Number must be greater than or equal to 0; prompts: Array must contain at least 1 element(s)",
    );
    expect(called).toBe(false);
    expect(d.queues.deadLetters[0]).toMatchObject({
      sourceQueue: 'step-requests',
      sourceJobId: 'j-bad',
      reason: 'invalid-payload',
      issues: [
        { path: 'step', message: 'Number must be greater than or equal to 0' },
        { path: 'prompts', message: 'Array must contain at least 1 element(s)' },
      ],
      receivedAt: '2026-08-01T12:00:00.000Z',
    });
    expect(d.queues.deadLetters[0].dataPreview.length).toBeLessThanOrEqual(2000);
    expect(await deadLettered(d.metrics, 'step-requests')).toBe(2);
  });

  it('dead-letters a job whose data is not even an object (no step to report failed)', async () => {
    const d = deps();
    await expect(runStandInStage('rollouts', { id: 'x', data: 'hello', attemptsMade: 0 }, d, async () => 1)).rejects.toThrow(/\(root\): Expected object, received string/);
    expect(d.queues.deadLetters).toHaveLength(1);
    expect(d.queues.on('step-events')).toEqual([]);
  });

  it('reports the step of a dead-lettered job failed: the step of its job id, else of its valid payload; a malformed job with another id fails no step', async () => {
    const d = deps();
    const req = testStepRequest('r', 'gs1_kernel', 4);
    await expect(runStandInStage('step-requests', { id: 'j', data: req, attemptsMade: 0 }, d, async () => { throw new UnrecoverableStageError('no'); })).rejects.toBeInstanceOf(DeadLetteredError);
    // malformed, under an id that names no step: its data claims step 4 of r/gs1_kernel, which is not believed
    await expect(runStandInStage('step-requests', { id: 'j2', data: { ...req, prompts: [] }, attemptsMade: 0 }, d, async () => 1)).rejects.toBeInstanceOf(DeadLetteredError);
    await expect(runStandInStage('rollouts', { id: 'run-7-grpo_gs8-3-grade', data: 'hello', attemptsMade: 0 }, d, async () => 1)).rejects.toBeInstanceOf(DeadLetteredError);
    await expect(runStandInStage('rollouts', { id: 'run-8-grpo_gs8-1-grade', data: { ...req, step: 9 }, attemptsMade: 0 }, d, async () => 1)).rejects.toBeInstanceOf(DeadLetteredError);
    const events = d.queues.on('step-events').map((e) => e.payload);
    expect(events.map((e) => [e.kind, e.runId, e.arm, e.step, e.kind === 'step-failed' && e.stage])).toEqual([
      ['step-failed', 'r', 'gs1_kernel', 4, 'prepare'],
      ['step-failed', 'run-7', 'grpo_gs8', 3, 'grade'],
      ['step-failed', 'run-8', 'grpo_gs8', 1, 'grade'],
    ]);
    expect(d.queues.deadLetters).toHaveLength(4);
    expect(events[0]).toMatchObject({ deadLetterJobId: 'step-requests-j-dead', deadLetter: { sourceQueue: 'step-requests', sourceJobId: 'j', reason: 'unrecoverable', error: 'no' } });
  });

  it('loads a by-reference payload and dead-letters one whose artefact is gone', async () => {
    const d = deps();
    const req = testStepRequest('r', 'grpo_gs8', 0);
    d.queues.artefacts.set('k1', req);
    const ref = { $artefact: { key: 'k1', sha256: 'a'.repeat(64), bytes: 10 }, runId: 'r' };
    expect(await runStandInStage('step-requests', { id: 'j', data: ref, attemptsMade: 0 }, d, async (p) => p.arm)).toBe('grpo_gs8');
    const gone = { $artefact: { key: 'k2', sha256: 'a'.repeat(64), bytes: 10 } };
    await expect(runStandInStage('step-requests', { id: 'j2', data: gone, attemptsMade: 0 }, d, async () => 1)).rejects.toThrow(/payload k2 is gone/);
    expect(d.queues.deadLetters.map((x) => x.sourceJobId)).toEqual(['j2']);
  });

  it('dead-letters a stage that refuses for good, and lets other errors retry', async () => {
    const d = deps();
    const req = testStepRequest('r', 'grpo_gs8', 0);
    await expect(runStandInStage('step-requests', { id: 'a', data: req, attemptsMade: 0 }, d, async () => { throw new UnrecoverableStageError('step 0 is in doubt'); })).rejects.toBeInstanceOf(DeadLetteredError);
    expect(d.queues.deadLetters[0]).toMatchObject({ reason: 'unrecoverable', error: 'step 0 is in doubt' });
    const early = runStandInStage('step-requests', { id: 'b', data: req, attemptsMade: 0 }, d, async () => { throw new OutOfOrderStepError('too early'); });
    await expect(early).rejects.toBeInstanceOf(OutOfOrderStepError);
    await expect(early).rejects.not.toBeInstanceOf(DeadLetteredError);
    expect(d.queues.deadLetters).toHaveLength(1);
  });

  it('fails a stage that runs past its time limit (retryable)', async () => {
    const d = deps();
    const req = testStepRequest('r', 'grpo_gs8', 0);
    const slow = runStandInStage('step-requests', { id: 's', data: req, attemptsMade: 0 }, { ...d, timeoutMs: 20 }, () => new Promise((r) => setTimeout(r, 500)));
    await expect(slow).rejects.toBeInstanceOf(StageTimeoutError);
    await expect(slow).rejects.toThrow('prepare of job s took longer than 20 ms');
  });

  it('retries a failing stage up to its attempts, then dead-letters the last failure with the reason', async () => {
    const d = deps();
    const req = testStepRequest('r', 'gs1_kernel', 0);
    const fail = (attemptsMade: number, opts?: { attempts?: number }) =>
      runStandInStage('step-requests', { id: 'r-gs1_kernel-0-prepare', data: req, attemptsMade, opts }, d, async () => {
        throw new Error('backend unavailable');
      });
    await expect(fail(0)).rejects.not.toBeInstanceOf(DeadLetteredError);
    await expect(fail(1)).rejects.not.toBeInstanceOf(DeadLetteredError);
    expect(d.queues.deadLetters).toEqual([]);
    // the catalog gives step-requests 3 attempts: the third is the last
    await expect(fail(2)).rejects.toBeInstanceOf(DeadLetteredError);
    expect(d.queues.deadLetters).toMatchObject([
      { sourceQueue: 'step-requests', sourceJobId: 'r-gs1_kernel-0-prepare', reason: 'unrecoverable', error: 'prepare of job r-gs1_kernel-0-prepare gave up after 3 attempts: backend unavailable' },
    ]);
    expect(await deadLettered(d.metrics, 'step-requests')).toBe(1);
    // the job's own attempts win over the catalog's
    await expect(fail(0, { attempts: 1 })).rejects.toThrow('gave up after 1 attempt: backend unavailable');
  });

  it('runs a stage again while Redis is away, without using up the job\'s attempts', async () => {
    const d = deps();
    const req = testStepRequest('r', 'gs1_kernel', 0);
    const pauses: number[] = [];
    let calls = 0;
    // the last attempt: an ordinary failure here would be dead-lettered
    const out = await runStandInStage('step-requests', { id: 'j', data: req, attemptsMade: 2 }, { ...d, sleep: async (ms) => void pauses.push(ms) }, async () => {
      calls++;
      if (calls <= 3) throw new Error("Stream isn't writeable and enableOfflineQueue options is false");
      return 'done';
    });
    expect(out).toBe('done');
    expect(calls).toBe(4);
    expect(pauses).toEqual([250, 500, 1000]);
    expect(d.queues.deadLetters).toEqual([]);
  });

  it('counts a Redis outage longer than its budget as a failed attempt', async () => {
    const d = deps();
    const req = testStepRequest('r', 'gs1_kernel', 0);
    const pauses: number[] = [];
    const run = runStandInStage('step-requests', { id: 'j', data: req, attemptsMade: 2 }, { ...d, redisOutageMs: 5000, sleep: async (ms) => void pauses.push(ms) }, async () => {
      throw Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:6379'), { code: 'ECONNREFUSED' });
    });
    await expect(run).rejects.toThrow('prepare of job j gave up after 3 attempts: connect ECONNREFUSED 127.0.0.1:6379');
    expect(pauses).toEqual([250, 500, 1000, 2000, 4000]);
    expect(d.queues.deadLetters).toHaveLength(1);
  });
});
