import { kernelBaseline } from './kernel-baseline';
import type { ScoredRollout } from './rollout';
import { appendToWindow, emptyWindow, kernelAdvantagesForWindow } from './rollout-window';

function stepBatch(step: number, size: number): ScoredRollout[] {
  return Array.from({ length: size }, (_, k) => ({
    rolloutId: `${step}-${k}`,
    step,
    promptId: `p${step * 100 + k}`,
    reward: (step * 7 + k * 3) % 5 === 0 ? 1 : 0,
    phi: [Math.log(30 + ((step * 13 + k * 17) % 200)), -0.4 - ((step * 5 + k * 11) % 23) / 10] as const,
  }));
}

const ids = (rs: readonly ScoredRollout[]): string[] => rs.map((r) => r.rolloutId);

describe('RolloutWindow', () => {
  it('starts empty with the pre-registered capacity of 256', () => {
    expect(emptyWindow()).toEqual({ capacity: 256, rollouts: [] });
    expect(emptyWindow(8).capacity).toBe(8);
    expect(() => emptyWindow(0)).toThrow(/positive integer/);
    expect(() => emptyWindow(2.5)).toThrow(/positive integer/);
  });

  it('keeps the newest first and at most `capacity`', () => {
    let w = emptyWindow(5);
    w = appendToWindow(w, stepBatch(0, 3));
    expect(ids(w.rollouts)).toEqual(['0-2', '0-1', '0-0']);
    w = appendToWindow(w, stepBatch(1, 3));
    expect(ids(w.rollouts)).toEqual(['1-2', '1-1', '1-0', '0-2', '0-1']);
    w = appendToWindow(w, stepBatch(2, 7));
    expect(ids(w.rollouts)).toEqual(['2-6', '2-5', '2-4', '2-3', '2-2']);
  });

  it('is pure and never holds a rolloutId twice', () => {
    const first = appendToWindow(emptyWindow(10), stepBatch(0, 4));
    const again = appendToWindow(first, stepBatch(0, 4));
    expect(ids(first.rollouts)).toEqual(['0-3', '0-2', '0-1', '0-0']);
    expect(again.rollouts).toEqual(first.rollouts);
    const batch = stepBatch(1, 2);
    const dup = appendToWindow(first, [batch[0], batch[1], batch[0]]);
    expect(ids(dup.rollouts)).toEqual(['1-0', '1-1', '0-3', '0-2', '0-1', '0-0']);
    expect(new Set(ids(dup.rollouts)).size).toBe(dup.rollouts.length);
    expect(ids(first.rollouts)).toHaveLength(4);
    expect(Object.isFrozen(dup.rollouts)).toBe(true);
  });

  it('carried across steps gives the kernel the batch plus the most recent earlier rollouts', () => {
    let w = emptyWindow(256);
    for (let step = 0; step < 6; step++) {
      const batch = stepBatch(step, 64);
      const viaWindow = kernelAdvantagesForWindow(batch, w, { bandwidth: 0.5 });
      // the same as the pinned function over the earlier rollouts of previous steps, newest first
      const earlier: ScoredRollout[] = [];
      for (let s = step - 1; s >= 0; s--) earlier.push(...stepBatch(s, 64).reverse());
      expect(viaWindow).toEqual(kernelBaseline(batch, earlier, { bandwidth: 0.5, windowSize: 256 }));
      // appending before the call does not count the batch twice
      const after = appendToWindow(w, batch);
      expect(kernelAdvantagesForWindow(batch, after, { bandwidth: 0.5 })).toEqual(viaWindow);
      w = after;
    }
    expect(w.rollouts).toHaveLength(256);
    expect(w.rollouts[0].rolloutId).toBe('5-63');
    expect(w.rollouts[255].rolloutId).toBe('2-0');
  });
});
