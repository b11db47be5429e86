import { createHash } from 'node:crypto';
import { NumpyPcg64, numpyPermutation, seededShuffle, takeTrainPrompts } from './seeded-shuffle';
import { PERMUTATION_DIGESTS, PERMUTATIONS, RAW64_SEED0 } from './seeded-shuffle.fixture';

const digest = (p: number[]): string => createHash('sha256').update(p.join(',')).digest('hex');

describe('numpy default_rng(seed).permutation(n), as HF Dataset.shuffle(seed) uses it', () => {
  it('PCG64 seeded through SeedSequence gives numpy random_raw for seed 0', () => {
    const rng = new NumpyPcg64(0);
    expect(RAW64_SEED0.map(() => rng.next64().toString())).toEqual(RAW64_SEED0);
  });

  it.each(PERMUTATIONS.map((c) => [c.n, c.seed, c] as const))('permutation(%i) with seed %s equals numpy', (_n, _s, c) => {
    expect(numpyPermutation(c.n, BigInt(c.seed))).toEqual(c.permutation);
  });

  it.each(PERMUTATION_DIGESTS.map((c) => [c.n, c.seed, c] as const))('permutation(%i) with seed %s: head and sha256 equal numpy', (_n, _s, c) => {
    const p = numpyPermutation(c.n, BigInt(c.seed));
    expect(p.slice(0, c.head.length)).toEqual(c.head);
    expect(digest(p)).toBe(c.sha256);
  });

  it('number and bigint seeds agree; bad seeds are refused', () => {
    expect(numpyPermutation(50, 7)).toEqual(numpyPermutation(50, 7n));
    expect(() => numpyPermutation(5, -1)).toThrow(/non-negative/);
    expect(() => numpyPermutation(5, 1.5)).toThrow(/integer/);
    expect(() => numpyPermutation(-1, 0)).toThrow(/non-negative integer/);
  });
});

describe('seededShuffle / takeTrainPrompts', () => {
  const items = Array.from({ length: 10 }, (_, k) => `item${k}`);

  it('orders items as ds.select(indices=permutation): shuffled[k] = items[perm[k]]', () => {
    // numpy: default_rng(0).permutation(10) = [4 6 2 7 3 5 9 0 8 1]
    expect(seededShuffle(items, 0)).toEqual([4, 6, 2, 7, 3, 5, 9, 0, 8, 1].map((k) => `item${k}`));
    expect(items[0]).toBe('item0'); // input untouched
  });

  it('takes the first n of the seed-0 order by default', () => {
    expect(takeTrainPrompts(items, 3)).toEqual(['item4', 'item6', 'item2']);
    expect(takeTrainPrompts(items, 3, 1)).toEqual(seededShuffle(items, 1).slice(0, 3));
    expect(takeTrainPrompts(items, 0)).toEqual([]);
    expect(() => takeTrainPrompts(items, 11)).toThrow(/exceeds the 10 problems/);
    expect(() => takeTrainPrompts(items, -1)).toThrow(/non-negative integer/);
  });
});
