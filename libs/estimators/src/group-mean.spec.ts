import { groupMeanAdvantages } from './group-mean';
import type { ScoredRollout } from './rollout';

// rollouts of one step from [promptId, reward] pairs, in sampling order
function batchOf(pairs: Array<[string, number]>, step = 0): ScoredRollout[] {
  return pairs.map(([promptId, reward], k) => ({ rolloutId: `${step}-${k}`, step, promptId, reward, phi: [4, -1] }));
}

describe('groupMeanAdvantages', () => {
  it('subtracts the mean reward of the same prompt, by hand', () => {
    const batch = batchOf([
      ['a', 1],
      ['b', 0.9],
      ['a', 0],
      ['b', -0.1],
      ['a', 0],
      ['b', -0.1],
      ['a', 1],
      ['b', 1],
    ]);
    const got = groupMeanAdvantages(batch);
    // a: mean 0.5; b: mean (0.9 - 0.1 - 0.1 + 1) / 4 = 0.425
    expect(got.map((a) => a.rolloutId)).toEqual(batch.map((r) => r.rolloutId));
    const expected = [0.5, 0.9 - 0.425, -0.5, -0.1 - 0.425, -0.5, -0.1 - 0.425, 0.5, 1 - 0.425];
    got.forEach((a, i) => expect(a.advantage).toBeCloseTo(expected[i], 15));
    expect(got[0].baseline).toBe(0.5);
    expect(got[1].baseline).toBeCloseTo(0.425, 15);
    expect(got.every((a) => a.effectiveNeighbors === 3 && !a.fallback && !a.dropped)).toBe(true);
  });

  it('sums to zero within each group of 8 (no std normalisation)', () => {
    const rewards = [1, 0, 0, 0.9, -0.1, 1, 0, 1];
    const got = groupMeanAdvantages(batchOf(rewards.map((r) => ['p', r] as [string, number])));
    const sum = got.reduce((s, a) => s + a.advantage, 0);
    expect(Math.abs(sum)).toBeLessThan(1e-15);
    const mean = rewards.reduce((s, r) => s + r, 0) / 8;
    got.forEach((a, i) => expect(a.advantage).toBe(rewards[i] - mean));
    expect(got[0].effectiveNeighbors).toBe(7);
  });

  it('gives constant-reward groups A = 0 exactly and keeps them by default (the cookbook default)', () => {
    const batch = batchOf([
      ['c', 0.9],
      ['v', 1],
      ['c', 0.9],
      ['v', 0],
      ['c', 0.9],
    ]);
    const got = groupMeanAdvantages(batch);
    expect(got.filter((_, i) => batch[i].promptId === 'c').map((a) => [a.advantage, a.baseline, a.dropped])).toEqual([
      [0, 0.9, false],
      [0, 0.9, false],
      [0, 0.9, false],
    ]);
    expect(got[1].advantage).toBe(0.5);
    expect(got[3].advantage).toBe(-0.5);
  });

  it('with dropConstantGroups flags the constant groups as dropped', () => {
    const batch = batchOf([
      ['c', 0],
      ['v', 1],
      ['c', 0],
      ['v', 0],
      ['k', 1],
      ['k', 1],
    ]);
    const got = groupMeanAdvantages(batch, { dropConstantGroups: true });
    expect(got.map((a) => a.dropped)).toEqual([true, false, true, false, true, true]);
    expect(got.map((a) => a.advantage)).toEqual([0, 0.5, 0, -0.5, 0, 0]);
  });

  it('with dropConstantGroups and every group constant keeps only the first group, as the cookbook does', () => {
    const batch = batchOf([
      ['x', 1],
      ['y', 0],
      ['x', 1],
      ['y', 0],
      ['z', -0.1],
    ]);
    const got = groupMeanAdvantages(batch, { dropConstantGroups: true });
    expect(got.map((a) => a.dropped)).toEqual([false, true, false, true, true]);
    expect(got.every((a) => a.advantage === 0)).toBe(true);
  });

  it('groups by prompt within a step: the same prompt in two steps is two groups', () => {
    const batch = [...batchOf([['p', 1], ['p', 0]], 0), ...batchOf([['p', 1], ['p', 1], ['p', 1]], 1)];
    const got = groupMeanAdvantages(batch, { dropConstantGroups: true });
    expect(got.map((a) => [a.advantage, a.effectiveNeighbors, a.dropped])).toEqual([
      [0.5, 1, false],
      [-0.5, 1, false],
      [0, 2, true],
      [0, 2, true],
      [0, 2, true],
    ]);
  });

  it('gives a group of one A = 0 and 0 neighbours; an empty batch gives nothing; rejects a non-finite reward', () => {
    expect(groupMeanAdvantages(batchOf([['solo', 0.9]]))).toEqual([
      { rolloutId: '0-0', baseline: 0.9, advantage: 0, effectiveNeighbors: 0, fallback: false, dropped: false },
    ]);
    expect(groupMeanAdvantages([])).toEqual([]);
    expect(() => groupMeanAdvantages(batchOf([['p', Number.NaN]]))).toThrow(/finite/);
  });
});
