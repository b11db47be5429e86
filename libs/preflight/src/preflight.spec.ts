import { importanceSamplingGradient, importanceSamplingLoss } from './importance-sampling';
import { referenceIsLoss } from './importance-sampling.reference';
import { checkTolerance } from './tolerance-check';

function lcg(seed: number): () => number {
  let s = seed >>> 0;
  return () => ((s = (Math.imul(s, 1664525) + 1013904223) >>> 0) / 2 ** 32);
}

describe('importance-sampling loss', () => {
  it('matches the hand-computed value on one datum', () => {
    // positions: prompt (A=0), two completion tokens with A=0.5; ratios e^0=1 and e^{-0.1-(-0.3)}=e^{0.2}
    const datums = [{ samplingLogprobs: [0, -1, -0.3], advantages: [0, 0.5, 0.5] }];
    const logprobs = [[-2, -1, -0.1]];
    expect(importanceSamplingLoss(datums, logprobs)).toBeCloseTo(-(0.5 + 0.5 * Math.exp(0.2)), 15);
    expect(importanceSamplingGradient(datums, logprobs)).toEqual([-0, -0.5, -0.5 * Math.exp(0.2)]);
  });

  it('agrees with the independent reference to 1e-12 on random batches', () => {
    const rand = lcg(7);
    for (let trial = 0; trial < 20; trial++) {
      const datums = Array.from({ length: 1 + Math.floor(rand() * 8) }, () => {
        const n = 1 + Math.floor(rand() * 30);
        const a = rand() * 2 - 1;
        const promptLen = Math.floor(rand() * n);
        return {
          samplingLogprobs: Array.from({ length: n }, (_, t) => (t < promptLen ? 0 : -rand() * 5)),
          advantages: Array.from({ length: n }, (_, t) => (t < promptLen ? 0 : a)),
        };
      });
      const logprobs = datums.map((d) => d.samplingLogprobs.map((s) => s + (rand() - 0.5) * 0.2));
      const ref = referenceIsLoss(datums.map((d) => d.samplingLogprobs), datums.map((d) => d.advantages), logprobs);
      expect(Math.abs(importanceSamplingLoss(datums, logprobs) - ref.loss)).toBeLessThan(1e-12);
      const grad = importanceSamplingGradient(datums, logprobs);
      grad.forEach((g, k) => expect(Math.abs(g - ref.gradient[k])).toBeLessThan(1e-12));
    }
  });

  it('rejects logprobs that do not align with the datum', () => {
    expect(() => importanceSamplingLoss([{ samplingLogprobs: [0, 1], advantages: [0, 1] }], [[0]])).toThrow(/datum 0/);
  });
});

describe('checkTolerance', () => {
  const tol = { atol: 1e-5, rtol: 1e-4, min_cosine: 0.99999 };
  it('passes identical vectors with zero errors and cosine 1', () => {
    const r = checkTolerance([1, 2, 3], [1, 2, 3], tol);
    expect(r).toEqual({ max_abs_error: 0, reference_max_abs: 3, relative_l2_error: 0, cosine: 1, pass: true, failures: [] });
  });
  it('computes max abs, relative L2 and cosine as defined', () => {
    const r = checkTolerance([3, 4.0001], [3, 4], { atol: 0, rtol: 0 });
    expect(r.max_abs_error).toBeCloseTo(1e-4, 12);
    expect(r.relative_l2_error).toBeCloseTo(1e-4 / 5, 12);
    expect(r.cosine).toBeCloseTo((9 + 4 * 4.0001) / (5 * Math.hypot(3, 4.0001)), 12);
    expect(r.pass).toBe(false);
  });
  it('fails on the element rule even when cosine is perfect (a scaled vector)', () => {
    const r = checkTolerance([2, 4], [1, 2], tol);
    expect(r.cosine).toBeCloseTo(1, 12);
    expect(r.pass).toBe(false);
  });
  it('fails on cosine for a sign flip within atol', () => {
    const r = checkTolerance([1e-7, -1e-7], [-1e-7, 1e-7], tol);
    expect(r.failures.join()).toMatch(/cosine/);
  });
  it('fails on NaN and on length mismatch', () => {
    expect(checkTolerance([NaN], [1], tol).pass).toBe(false);
    expect(checkTolerance([1], [1, 2], tol).pass).toBe(false);
  });
});
