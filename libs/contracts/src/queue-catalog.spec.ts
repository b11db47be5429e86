import { deadLetterJobId, jobIdFor, parseJobId, stepFailedJobId } from './job-id';
import { QUEUE_CATALOG } from './queue-catalog';
import { QUEUE_NAME_LIST, QUEUE_NAMES } from './queue-names';

describe('queue catalog', () => {
  it('names every queue once, kebab-case plural, frozen', () => {
    expect(new Set(QUEUE_NAME_LIST).size).toBe(QUEUE_NAME_LIST.length);
    for (const name of QUEUE_NAME_LIST) {
      expect(name).toMatch(/^[a-z]+(-[a-z]+)*s$/);
      expect(QUEUE_CATALOG[name].name).toBe(name);
    }
    expect(Object.keys(QUEUE_CATALOG).sort()).toEqual([...QUEUE_NAME_LIST].sort());
    expect(Object.isFrozen(QUEUE_NAMES)).toBe(true);
    expect(Object.isFrozen(QUEUE_CATALOG)).toBe(true);
    expect(() => {
      (QUEUE_NAMES as { rollouts: string }).rollouts = 'renamed';
    }).toThrow(TypeError);
  });

  it('gives every queue retries with exponential back-off and bounded retention, dead letters no retry', () => {
    for (const name of QUEUE_NAME_LIST) {
      const o = QUEUE_CATALOG[name].jobOptions;
      expect(o.backoff.type).toBe('exponential');
      expect(o.removeOnComplete.count).toBeGreaterThan(0);
      expect(o.removeOnFail.age).toBeGreaterThan(0);
      expect(o.attempts).toBe(name === 'dead-letters' ? 1 : 3);
    }
  });

  it('step-events carries both a step-complete and a step-failed event, and refuses any other kind', () => {
    const schema = QUEUE_CATALOG['step-events'].schema;
    const failed = {
      runId: 'r',
      arm: 'a',
      step: 2,
      kind: 'step-failed',
      stage: 'grade',
      deadLetterJobId: 'rollouts-r-a-2-grade-dead',
      deadLetter: { sourceQueue: 'rollouts', sourceJobId: 'r-a-2-grade', reason: 'unrecoverable', error: 'boom', receivedAt: '2026-12-03T00:00:00.000Z' },
    };
    expect(schema.safeParse(failed).success).toBe(true);
    expect(schema.safeParse({ ...failed, kind: 'step-lost' }).success).toBe(false);
    expect(schema.safeParse({ ...failed, stage: 'nowhere' }).success).toBe(false);
  });
});

describe('job ids', () => {
  it('are <run>-<arm>-<step>-<stage> and carry no ":"', () => {
    const id = jobIdFor({ runId: 'gs1-vs-grpo.v1', arm: 'gs1_kernel', step: 12 }, 'advantage');
    expect(id).toBe('gs1-vs-grpo.v1-gs1_kernel-12-advantage');
    expect(id.split('-').slice(-3)).toEqual(['gs1_kernel', '12', 'advantage']);
  });

  it('of a step-failed event never equal the step-complete id of the same step, and differ by time', () => {
    const h = { runId: 'r', arm: 'a', step: 3 };
    expect(stepFailedJobId(h, 'grade', 5)).not.toBe(jobIdFor(h, 'complete'));
    expect(stepFailedJobId(h, 'grade', 5)).not.toBe(stepFailedJobId(h, 'grade', 6));
    expect(stepFailedJobId(h, 'grade', 5)).not.toMatch(/:/);
  });

  it('parse back to their step, including a run id with dashes and a step-failed id; other ids do not', () => {
    const h = { runId: 'run-2026-12-03', arm: 'gs1_kernel', step: 12 };
    expect(parseJobId(jobIdFor(h, 'train'))).toEqual(h);
    expect(parseJobId(stepFailedJobId(h, 'grade', 7))).toEqual(h);
    expect(parseJobId('rollouts-x-dead')).toBeNull();
    expect(parseJobId('r-Arm-1-train')).toBeNull();
  });

  it('differ for every (arm, step, stage) of a run', () => {
    const ids = new Set<string>();
    for (const arm of ['grpo_gs8', 'gs1_kernel']) {
      for (let step = 0; step < 40; step++) {
        for (const stage of ['prepare', 'sample', 'grade', 'advantage', 'train', 'complete'] as const) ids.add(jobIdFor({ runId: 'r', arm, step }, stage));
      }
    }
    expect(ids.size).toBe(2 * 40 * 6);
  });

  it('dead-letter ids name the source and never contain ":"', () => {
    expect(deadLetterJobId('rollouts', 'a:b', 0)).toBe('rollouts-a_b-dead');
    expect(deadLetterJobId('rollouts', undefined, 42)).toBe('rollouts-anonymous-42-dead');
  });
});
