import { kernelBaseline, KERNEL_MASS_FLOOR } from './kernel-baseline';
import { referenceKernelBaseline, type ReferencePoint } from './kernel-baseline.reference';
import type { ScoredRollout } from './rollout';
import { mulberry32 } from '@rx/stats';

// a seeded PRNG so every random window is reproducible
const rng = mulberry32;

const REWARDS = [1, 0, -0.1, 0.9];

function randomRollouts(next: () => number, count: number, step: number): ScoredRollout[] {
  return Array.from({ length: count }, (_, k) => ({
    rolloutId: `${step}-${k}`,
    step,
    promptId: `p${Math.floor(next() * 1e9)}`,
    reward: REWARDS[Math.floor(next() * REWARDS.length)],
    phi: [Math.log(20 + Math.floor(next() * 400)), -3 + 2.5 * next()] as const,
  }));
}

// earlier rollouts, most recent first, from steps before `step`
function earlierRollouts(next: () => number, count: number, step: number, perStep: number): ScoredRollout[] {
  const out: ScoredRollout[] = [];
  for (let s = step - 1; out.length < count; s--) {
    out.push(...randomRollouts(next, perStep, s).reverse());
  }
  return out.slice(0, count);
}

const toPoint = (r: ScoredRollout): ReferencePoint => ({ id: r.rolloutId, r: r.reward, x: r.phi[0], y: r.phi[1] });

function expectClose(actual: number, expected: number, tol = 1e-12): void {
  const scale = Math.max(1, Math.abs(expected));
  if (!(Math.abs(actual - expected) <= tol * scale)) {
    throw new Error(`expected ${expected}, got ${actual} (|diff| ${Math.abs(actual - expected)} > ${tol * scale})`);
  }
}

function looMean(values: number[], i: number): number {
  let s = 0;
  for (let j = 0; j < values.length; j++) if (j !== i) s += values[j];
  return s / (values.length - 1);
}

describe('kernelBaseline', () => {
  it('matches the independent float64 reference to 1e-12 on 60 seeded random windows', () => {
    const next = rng(20260);
    let fallbacks = 0;
    let kernelled = 0;
    for (let trial = 0; trial < 60; trial++) {
      const batchSize = 1 + Math.floor(next() * 64);
      const earlierCount = Math.floor(next() * 320);
      const h = [0.05, 0.1, 0.5, 1, 2][trial % 5];
      const windowSize = trial % 7 === 0 ? 64 + Math.floor(next() * 64) : 256;
      const step = 10;
      const batch = randomRollouts(next, batchSize, step);
      const earlier = earlierRollouts(next, earlierCount, step, 64);
      if (batchSize + earlierCount < 2) continue;
      const got = kernelBaseline(batch, earlier, { bandwidth: h, windowSize });
      const ref = referenceKernelBaseline(batch.map(toPoint), earlier.map(toPoint), h, windowSize);
      expect(got).toHaveLength(batchSize);
      got.forEach((g, i) => {
        expect(g.rolloutId).toBe(batch[i].rolloutId);
        expect(g.fallback).toBe(ref.fellBack[i]);
        expect(g.dropped).toBe(false);
        expectClose(g.baseline, ref.b[i]);
        expectClose(g.advantage, ref.a[i]);
        expectClose(g.effectiveNeighbors, ref.neff[i]);
        if (g.fallback) fallbacks++;
        else kernelled++;
      });
    }
    // the random windows exercise both branches
    expect(fallbacks).toBeGreaterThan(0);
    expect(kernelled).toBeGreaterThan(1000);
  });

  it('forced activation: heterogeneous phi gives a non-constant baseline that tracks the local reward', () => {
    // two kinds of prompts: short/confident ones mostly solved, long/unsure ones mostly failed
    const next = rng(7);
    const batch: ScoredRollout[] = Array.from({ length: 64 }, (_, k) => {
      const easy = k % 2 === 0;
      return {
        rolloutId: `0-${k}`,
        step: 0,
        promptId: `p${k}`,
        reward: next() < (easy ? 0.9 : 0.1) ? 1 : 0,
        phi: easy ? [Math.log(40) + 0.1 * next(), -0.5 - 0.1 * next()] : [Math.log(300) + 0.1 * next(), -2.5 - 0.1 * next()],
      };
    });
    const got = kernelBaseline(batch, [], { bandwidth: 0.5 });
    const easyB = got.filter((_, k) => k % 2 === 0).map((a) => a.baseline);
    const hardB = got.filter((_, k) => k % 2 === 1).map((a) => a.baseline);
    expect(new Set(got.map((a) => a.baseline)).size).toBeGreaterThan(10);
    expect(Math.min(...easyB)).toBeGreaterThan(0.6);
    expect(Math.max(...hardB)).toBeLessThan(0.4);
    expect(got.some((a) => a.fallback)).toBe(false);
    // each rollout draws on about its own cluster (31 others), not on the whole window (63)
    for (const a of got) {
      expect(a.effectiveNeighbors).toBeGreaterThan(8);
      expect(a.effectiveNeighbors).toBeLessThan(40);
    }
  });

  it('forced non-activation: bandwidth 1e6 gives the leave-one-out window mean to 1e-12', () => {
    const next = rng(99);
    const batch = randomRollouts(next, 64, 5);
    const earlier = earlierRollouts(next, 300, 5, 64);
    const got = kernelBaseline(batch, earlier, { bandwidth: 1e6 });
    const windowRewards = [...batch, ...earlier.slice(0, 256 - 64)].map((r) => r.reward);
    got.forEach((a, i) => {
      expect(a.fallback).toBe(false);
      expectClose(a.baseline, looMean(windowRewards, i));
      expectClose(a.advantage, batch[i].reward - looMean(windowRewards, i));
      expect(Math.abs(a.effectiveNeighbors - 255)).toBeLessThan(1e-9);
    });
  });

  it('near-constant features (std < 1e-12 counts as 1) give every pair weight ~1: the leave-one-out mean', () => {
    // phi_0 is constant; phi_1 varies by 2e-13 (population std ~1e-13): unscaled, its z differences stay ~1e-13
    const batch: ScoredRollout[] = [1, 0, 0.9, -0.1, 1].map((reward, k) => ({
      rolloutId: `0-${k}`,
      step: 0,
      promptId: `p${k}`,
      reward,
      phi: [Math.log(77), -1.25 + (k % 2) * 2e-13],
    }));
    const got = kernelBaseline(batch, [], { bandwidth: 0.01 });
    const rewards = batch.map((r) => r.reward);
    got.forEach((a, i) => {
      expect(a.fallback).toBe(false);
      expectClose(a.baseline, looMean(rewards, i));
      expectClose(a.effectiveNeighbors, 4);
    });
  });

  it('falls back to the leave-one-out window mean, flagged, when the kernel mass is below 1e-3', () => {
    const cluster = Array.from({ length: 9 }, (_, k) => ({
      rolloutId: `0-${k}`,
      step: 0,
      promptId: `p${k}`,
      reward: k % 3 === 0 ? 1 : 0,
      phi: [4, -1] as const,
    }));
    const loner: ScoredRollout = { rolloutId: '0-9', step: 0, promptId: 'far', reward: 1, phi: [6, -1] };
    const batch = [...cluster, loner];
    const h = 0.2;
    const got = kernelBaseline(batch, [], { bandwidth: h });
    const rewards = batch.map((r) => r.reward);
    // phi_0 over the window: mean 4.2, population std 0.6, so the loner sits 2/0.6 standard deviations from the
    // cluster: w = exp(-(2/0.6)^2 / (2 h^2)), mass = 9 w < 1e-3
    expect(got[9].fallback).toBe(true);
    expectClose(got[9].baseline, looMean(rewards, 9));
    expectClose(got[9].advantage, 1 - looMean(rewards, 9));
    expect(9 * Math.exp(-((2 / 0.6) ** 2) / (2 * h * h))).toBeLessThan(KERNEL_MASS_FLOOR);
    // its effective neighbours still come from the kernel weights: 9 equal tiny weights give 9
    expectClose(got[9].effectiveNeighbors, 9);
    // the cluster members weigh each other 1 and the loner ~0: the mean of the other 8 cluster rewards
    const clusterRewards = cluster.map((r) => r.reward);
    for (let i = 0; i < 9; i++) {
      expect(got[i].fallback).toBe(false);
      expectClose(got[i].baseline, looMean(clusterRewards, i), 1e-9);
    }
  });

  it('reports 0 effective neighbours when every weight underflows to 0', () => {
    const batch: ScoredRollout[] = [
      { rolloutId: '0-0', step: 0, promptId: 'a', reward: 1, phi: [1, 0] },
      { rolloutId: '0-1', step: 0, promptId: 'b', reward: 0, phi: [9, 0] },
    ];
    const got = kernelBaseline(batch, [], { bandwidth: 1e-3 });
    expect(got.map((a) => [a.fallback, a.baseline, a.effectiveNeighbors])).toEqual([
      [true, 0, 0],
      [true, 1, 0],
    ]);
  });

  it('uses the batch plus only the most recent earlier rollouts, windowSize in all', () => {
    const next = rng(3);
    const batch = randomRollouts(next, 10, 3);
    const earlier = earlierRollouts(next, 40, 3, 10);
    const base = kernelBaseline(batch, earlier, { bandwidth: 0.5, windowSize: 30 });
    // earlier[20..] lies outside the window of 30: changing it changes nothing
    const tail = earlier.map((r, k) => (k >= 20 ? { ...r, reward: 7, phi: [100, 100] as const } : r));
    expect(kernelBaseline(batch, tail, { bandwidth: 0.5, windowSize: 30 })).toEqual(base);
    // earlier[19] is inside it
    const inside = earlier.map((r, k) => (k === 19 ? { ...r, reward: 7 } : r));
    expect(kernelBaseline(batch, inside, { bandwidth: 0.5, windowSize: 30 })).not.toEqual(base);
    // the default window is 256
    const many = earlierRollouts(next, 400, 3, 10);
    const dflt = kernelBaseline(batch, many, { bandwidth: 0.5 });
    const ref = referenceKernelBaseline(batch.map(toPoint), many.map(toPoint), 0.5, 256);
    dflt.forEach((a, i) => expectClose(a.baseline, ref.b[i]));
  });

  it('rejects what the definition does not cover, with a message', () => {
    const next = rng(1);
    const batch = randomRollouts(next, 4, 0);
    expect(() => kernelBaseline(batch, [], { bandwidth: 0 })).toThrow(/bandwidth/);
    expect(() => kernelBaseline(batch, [], { bandwidth: Number.NaN })).toThrow(/bandwidth/);
    expect(() => kernelBaseline(batch, [], { bandwidth: 0.5, windowSize: 3 })).toThrow(/more than the window/);
    expect(() => kernelBaseline([batch[0]], [], { bandwidth: 0.5 })).toThrow(/at least 2/);
    expect(() => kernelBaseline([batch[0], batch[0]], [], { bandwidth: 0.5 })).toThrow(/twice/);
    expect(() => kernelBaseline(batch, [batch[1]], { bandwidth: 0.5 })).toThrow(/both in the batch/);
    const bad = [{ ...batch[0], phi: [Number.NaN, 0] as const }, batch[1]];
    expect(() => kernelBaseline(bad, [], { bandwidth: 0.5 })).toThrow(/finite/);
    expect(kernelBaseline([], batch, { bandwidth: 0.5 })).toEqual([]);
  });
});
