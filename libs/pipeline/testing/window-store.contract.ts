// TEST CONTRACT. The behaviour every RolloutWindowStore shares (run against the in-memory and the Redis one).
import { appendToWindow, emptyWindow, type ScoredRollout } from '@rx/estimators';
import { WindowGapError, type RolloutWindowStore } from '@rx/pipeline';

export function rollouts(step: number, n: number): ScoredRollout[] {
  return Array.from({ length: n }, (_, i) => ({ rolloutId: `${step}-${i}`, step, promptId: `p${i % 3}`, reward: (i % 4) / 3, phi: [Math.log(10 + i), -1 - i / 100] as const }));
}

export function describeWindowStoreContract(name: string, make: () => RolloutWindowStore | Promise<RolloutWindowStore>): void {
  describe(`${name} (RolloutWindowStore contract)`, () => {
    const key = { runId: 'run-a', arm: 'gs1_kernel' };

    it('starts step 0 from an empty window of the capacity asked', async () => {
      const store = await make();
      const w = await store.windowBefore(key, 0, 256);
      expect(w).toEqual({ capacity: 256, rollouts: [] });
      expect(await store.latest(key)).toBeNull();
    });

    it('gives step N the window committed after step N-1, values preserved exactly', async () => {
      const store = await make();
      const after0 = appendToWindow(emptyWindow(8), rollouts(0, 5));
      await store.commitAfter(key, 0, after0);
      const before1 = await store.windowBefore(key, 1, 8);
      expect(before1).toEqual(after0);
      expect(before1.rollouts[0].phi[1]).toBe(after0.rollouts[0].phi[1]);
      const after1 = appendToWindow(before1, rollouts(1, 5));
      await store.commitAfter(key, 1, after1);
      expect((await store.windowBefore(key, 2, 8)).rollouts.map((r) => r.rolloutId)).toEqual(['1-4', '1-3', '1-2', '1-1', '1-0', '0-4', '0-3', '0-2']);
      expect(await store.latest(key)).toEqual({ step: 1, window: after1 });
    });

    it('keeps the first window committed for a step (a replay cannot append twice)', async () => {
      const store = await make();
      const first = appendToWindow(emptyWindow(16), rollouts(0, 4));
      await store.commitAfter(key, 0, first);
      const again = appendToWindow(first, rollouts(0, 4)); // what a buggy replay would build
      const stored = await store.commitAfter(key, 0, appendToWindow(again, rollouts(9, 1)));
      expect(stored).toEqual(first);
      expect(await store.windowBefore(key, 1, 16)).toEqual(first);
    });

    it('refuses step N when step N-1 was never committed', async () => {
      const store = await make();
      await expect(store.windowBefore(key, 3, 8)).rejects.toBeInstanceOf(WindowGapError);
      await expect(store.windowBefore(key, 3, 8)).rejects.toThrow(/no window stored after step 2 of run-a\/gs1_kernel/);
    });

    it('keeps arms and runs apart', async () => {
      const store = await make();
      await store.commitAfter(key, 0, appendToWindow(emptyWindow(8), rollouts(0, 2)));
      await expect(store.windowBefore({ runId: 'run-a', arm: 'grpo_gs8' }, 1, 8)).rejects.toBeInstanceOf(WindowGapError);
      await expect(store.windowBefore({ runId: 'run-b', arm: 'gs1_kernel' }, 1, 8)).rejects.toBeInstanceOf(WindowGapError);
    });
  });
}
