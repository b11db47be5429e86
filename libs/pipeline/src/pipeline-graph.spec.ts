import { QUEUE_NAME_LIST } from '@rx/contracts';
import { edgesOf, jobNameOf, PIPELINE_GRAPH, queuesConsumedBy, queuesTouchedBy, SINK_QUEUES, stepDeadlineMs } from './pipeline-graph';

describe('pipeline graph', () => {
  it('is one chain: each stage feeds the queue the next one consumes, and the controller closes the loop', () => {
    for (let i = 0; i < PIPELINE_GRAPH.length; i++) {
      expect(PIPELINE_GRAPH[i].produces).toBe(PIPELINE_GRAPH[(i + 1) % PIPELINE_GRAPH.length].consumes);
    }
    expect(PIPELINE_GRAPH.map((e) => `${e.service}.${e.stage}`)).toEqual(['trainer.prepare', 'sampler.sample', 'grader.grade', 'advantage.advantage', 'trainer.train', 'controller.complete']);
  });

  it('gives every queue exactly one consumer, except the dead-letter sink', () => {
    const consumed = PIPELINE_GRAPH.map((e) => e.consumes);
    expect(new Set(consumed).size).toBe(consumed.length);
    expect([...consumed, ...SINK_QUEUES].sort()).toEqual([...QUEUE_NAME_LIST].sort());
  });

  it('bounds one step end to end: every stage may use all its attempts, each up to its time limit, plus back-off', () => {
    // prepare 5 min, sample 30, grade 5, advantage 2, train 30 (3 attempts each); back-off 1+2 s (light), 2+4 s (batch)
    const minutes = (5 + 30 + 5 + 2 + 30) * 3;
    const backoff = 2 * 3000 + 3 * 6000;
    expect(stepDeadlineMs()).toBe(minutes * 60_000 + backoff);
    const short = { prepare: 100, sample: 100, grade: 100, advantage: 100, train: 100 };
    expect(stepDeadlineMs({ timeoutMs: short, slackMs: 50 })).toBe(5 * 3 * 100 + backoff + 5 * 50);
  });

  it('lists what each service consumes and touches', () => {
    expect(queuesConsumedBy('trainer')).toEqual(['step-requests', 'train-steps']);
    expect(queuesTouchedBy('grader').sort()).toEqual(['dead-letters', 'graded-rollouts', 'rollouts', 'step-events']);
  });
});

describe('edges of a service', () => {
  it('are the ones the graph gives it, in graph order, each with its stage function', () => {
    expect(edgesOf('trainer').map((e) => e.stage)).toEqual(['prepare', 'train']);
    expect(edgesOf('controller').map((e) => e.consumes)).toEqual(['step-events']);
    for (const e of PIPELINE_GRAPH) expect(typeof e.run).toBe('function');
  });

  it('name their jobs after the consuming stage (dead letters: dead-letter)', () => {
    expect(jobNameOf('rollouts')).toBe('grade');
    expect(jobNameOf('step-events')).toBe('complete');
    expect(jobNameOf('dead-letters')).toBe('dead-letter');
  });
});
