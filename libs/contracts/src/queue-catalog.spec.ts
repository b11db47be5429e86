import { deadLetterJobId, jobIdFor } from './job-id';
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

  it('stage of each queue follows the pipeline order', () => {
    expect(QUEUE_NAME_LIST.map((q) => QUEUE_CATALOG[q].stage)).toEqual(['prepare', 'sample', 'grade', 'advantage', 'train', 'complete', 'dead-letter']);
  });
});

describe('job ids', () => {
  it('are <run>-<arm>-<step>-<stage> and carry no ":"', () => {
    const id = jobIdFor({ runId: 'gs1-vs-grpo.v1', arm: 'gs1_kernel', step: 12 }, 'advantage');
    expect(id).toBe('gs1-vs-grpo.v1-gs1_kernel-12-advantage');
    expect(id.split('-').slice(-3)).toEqual(['gs1_kernel', '12', 'advantage']);
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
