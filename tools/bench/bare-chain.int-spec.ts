import { mkdtempSync, rmSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { QueueEvents } from 'bullmq';
import { bareChainMs } from './bare-chain';
import { benchPrefix, redisUrl } from './service-stack';

// The bare chain must be the step's path: every queue of the graph in order, through the four forwarders, each
// adding the payload its edge produced. Every queue reports each job added to it; each queue's payload names the
// queue, so the step event that comes back says it went through the trainer's `train` edge.
describe('bareChainMs', () => {
  let work: string;
  beforeAll(() => (work = mkdtempSync(path.join(os.tmpdir(), 'rx-bare-chain-'))));
  afterAll(() => rmSync(work, { recursive: true, force: true }));

  it('carries each chain through the six queues and times it', async () => {
    const queues = ['step-requests', 'sample-requests', 'rollouts', 'graded-rollouts', 'train-steps', 'step-events'] as const;
    const payloads = Object.fromEntries(queues.map((q) => [q, { carried: q }]));
    const events: Array<[string, unknown]> = [];
    const prefix = benchPrefix('bare-chain-test');
    const added: string[] = [];
    const listeners = queues.map((q) => new QueueEvents(q, { connection: { url: redisUrl() }, prefix }));
    for (const l of listeners) {
      l.on('added', ({ jobId }) => added.push(jobId));
      await l.waitUntilReady();
    }
    let loads = 0;
    const times = await bareChainMs({
      prefix,
      payloads,
      work,
      offsetMs: 10,
      rounds: [0, 1, 2].map(() => async () => void loads++),
      onEvent: (id, data) => events.push([id, data]),
    });
    expect(times).toHaveLength(3);
    for (const t of times) expect(t).toBeGreaterThan(0);
    expect(loads).toBe(3);
    expect(events).toEqual([0, 1, 2].map((i) => [`chain${i}.step-events`, { carried: 'step-events' }]));
    await Promise.all(listeners.map((l) => l.close()));
    // each queue's events come on a connection of their own: compare as sets, not in arrival order
    expect([...added].sort()).toEqual([0, 1, 2].flatMap((i) => queues.map((q) => `chain${i}.${q}`)).sort());
  }, 120_000);
});
