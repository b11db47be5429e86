// The lane lets the event loop answer between two compute requests: a real HTTP request to this process, sent while
// eight CPU-bound requests (busy 100 ms each) wait, is answered before the last of them runs. The control runs the same
// eight as requests that arrive together do without the lane (each after the one before it, in one turn of the loop):
// there the answer comes only after all eight.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ComputeLane } from './compute-lane';

function busy(ms: number): void {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    // CPU-bound, as the embedded model's forward pass
  }
}

describe('ComputeLane', () => {
  let server: Server;
  let url: string;
  const events: string[] = [];

  beforeAll(async () => {
    server = createServer((_req, res) => {
      events.push('health answered');
      res.end('ok');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/health`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));
  beforeEach(() => (events.length = 0));

  /** the compute requests queued, then at once a health request on a socket of its own; both awaited */
  async function healthWhile(queue: () => Promise<unknown>): Promise<void> {
    const computed = queue();
    const answered = fetch(url).then((r) => r.text());
    await Promise.all([computed, answered]);
  }

  const jobs = (run: (job: () => Promise<void>) => Promise<void>) => () =>
    Promise.all(
      [1, 2, 3, 4, 5, 6, 7, 8].map((i) =>
        run(async () => {
          events.push(`compute ${i}`);
          busy(100);
        }),
      ),
    );

  it('answers a request that arrived meanwhile between two compute requests', async () => {
    const lane = new ComputeLane();
    await healthWhile(jobs((job) => lane.run(job)));
    expect(events).toHaveLength(9);
    // answered while compute was under way: after the first request, before the last
    expect(events.indexOf('health answered')).toBeGreaterThan(0);
    expect(events.indexOf('health answered')).toBeLessThan(events.indexOf('compute 8'));
    expect(events.filter((e) => e.startsWith('compute'))).toEqual([1, 2, 3, 4, 5, 6, 7, 8].map((i) => `compute ${i}`));
  });

  it('control: without the lane the same requests hold the answer until all eight are done', async () => {
    let chain: Promise<void> = Promise.resolve();
    await healthWhile(jobs((job) => (chain = chain.then(job))));
    expect(events).toHaveLength(9);
    expect(events[events.length - 1]).toBe('health answered');
  });

  it('keeps going after a request that fails, and that request alone fails', async () => {
    const lane = new ComputeLane();
    const failed = lane.run(async () => {
      throw new Error('boom');
    });
    const next = lane.run(async () => 7);
    await expect(failed).rejects.toThrow('boom');
    await expect(next).resolves.toBe(7);
  });
});
