import { mulberry32 } from './seeded-random';

describe('mulberry32', () => {
  it('draws the reference sequence (an independent Python implementation of mulberry32)', () => {
    const r = mulberry32(42);
    expect([r(), r(), r()]).toEqual([0.6011037519201636, 0.44829055899754167, 0.8524657934904099]);
    // the seed is taken modulo 2^32
    const wrapped = mulberry32(2 ** 32 + 7);
    expect([wrapped(), wrapped()]).toEqual([0.011704753153026104, 0.06195825757458806]);
  });

  it('gives the same stream for the same seed and stays in [0, 1)', () => {
    const a = mulberry32(7);
    const b = mulberry32(7);
    const xs = Array.from({ length: 10_000 }, () => a());
    expect(Array.from({ length: 10_000 }, () => b())).toEqual(xs);
    expect(xs.every((x) => x >= 0 && x < 1)).toBe(true);
    const mean = xs.reduce((s, x) => s + x, 0) / xs.length;
    expect(Math.abs(mean - 0.5)).toBeLessThan(0.01);
  });
});
