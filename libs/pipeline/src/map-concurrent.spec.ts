import { mapConcurrent } from './map-concurrent';

describe('mapConcurrent', () => {
  it('keeps input order and never exceeds the limit', async () => {
    let inFlight = 0;
    let max = 0;
    const out = await mapConcurrent([30, 5, 20, 1, 10, 2, 8], 3, async (ms, i) => {
      inFlight++;
      max = Math.max(max, inFlight);
      await new Promise((r) => setTimeout(r, ms));
      inFlight--;
      return i * 10;
    });
    expect(out).toEqual([0, 10, 20, 30, 40, 50, 60]);
    expect(max).toBe(3);
  });

  it('rejects with the first error and starts no new work after it', async () => {
    const started: number[] = [];
    await expect(
      mapConcurrent([0, 1, 2, 3, 4, 5], 2, async (x) => {
        started.push(x);
        await new Promise((r) => setTimeout(r, 5));
        if (x === 1) throw new Error('boom');
        return x;
      }),
    ).rejects.toThrow('boom');
    expect(started.length).toBeLessThan(6);
  });

  it('refuses a limit below 1', async () => {
    await expect(mapConcurrent([1], 0, async (x) => x)).rejects.toThrow(/positive integer/);
  });
});
