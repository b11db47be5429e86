import { bettingLowerY, bettingOrder, bettingUpperY, pairedBetting } from './betting';
import { bettingBoundsReference } from './betting.reference';
import { bettingItems, pairedBound } from './paired-bound';
import { publishedPairs, PUBLISHED_RULE } from './published-pairs.fixture';
import { mulberry32 } from './seeded-random';

describe('the betting bound', () => {
  it('matches the grid-search reference on the published pairs in three fixed orders', () => {
    const { treatment, baseline } = publishedPairs();
    for (const seed of [0, 1, 2]) {
      const order = bettingOrder(treatment.length, seed);
      const y = order.map((i) => (treatment[i] - baseline[i] + 1) / 2);
      const ref = bettingBoundsReference(y, 0.05);
      expect(Math.abs(bettingLowerY(y, 0.05) - ref.lower)).toBeLessThan(2e-9);
      expect(Math.abs(bettingUpperY(y, 0.05) - ref.upper)).toBeLessThan(2e-9);
      const r = pairedBetting(order.map((i) => treatment[i]), order.map((i) => baseline[i]), PUBLISHED_RULE);
      expect(Math.abs(r.lower - (2 * ref.lower - 1))).toBeLessThan(4e-9);
      expect(r.lower).toBeLessThan(r.effect);
      expect(r.upper).toBeGreaterThan(r.effect);
    }
  });

  it('matches the reference on random data of other means and alphas', () => {
    const random = mulberry32(11);
    for (let k = 0; k < 12; k++) {
      const n = 5 + Math.floor(random() * 150);
      const p = random();
      const y = Array.from({ length: n }, () => (random() < p ? random() : random() * 0.3));
      const alpha = 0.01 + random() * 0.2;
      const ref = bettingBoundsReference(y, alpha);
      expect(Math.abs(bettingLowerY(y, alpha) - ref.lower)).toBeLessThan(2e-9);
      expect(Math.abs(bettingUpperY(y, alpha) - ref.upper)).toBeLessThan(2e-9);
    }
  });

  it('covers the true mean: at most alpha of 300 simulated samples have a lower bound above it', () => {
    const random = mulberry32(3);
    let above = 0;
    for (let k = 0; k < 300; k++) {
      const y = Array.from({ length: 200 }, () => (random() < 0.3 ? 1 : random() < 0.5 ? 0 : 0.5)); // mean 0.3 + 0.7 * 0.25 = 0.475
      if (bettingLowerY(y, 0.1) > 0.475) above++;
    }
    expect(above / 300).toBeLessThanOrEqual(0.1);
  });

  it('takes the items sorted by item_id, then in the seed order: the file order does not matter, the seed does', () => {
    const { treatment, baseline } = publishedPairs();
    const ids = treatment.map((_, i) => `gsm8k_test_${i}`);
    const rule = { ...PUBLISHED_RULE, bound: 'betting' as const, orderSeed: 0 };
    const forward = pairedBound({ itemIds: ids, treatment, baseline }, rule);
    const reversed = pairedBound({ itemIds: [...ids].reverse(), treatment: [...treatment].reverse(), baseline: [...baseline].reverse() }, rule);
    expect(reversed.lower).toBe(forward.lower);
    const other = pairedBound({ itemIds: ids, treatment, baseline }, { ...rule, orderSeed: 1 });
    expect(other.lower).not.toBe(forward.lower);
    const ordered = bettingItems({ itemIds: ids, treatment, baseline }, 0);
    expect(ordered.treatment.reduce((s, x) => s + x, 0)).toBe(treatment.reduce((s, x) => s + x, 0));
  });

  it('draws a permutation', () => {
    const order = bettingOrder(1000, 5);
    expect([...order].sort((a, b) => a - b)).toEqual(Array.from({ length: 1000 }, (_, i) => i));
    expect(order).not.toEqual(Array.from({ length: 1000 }, (_, i) => i));
    expect(bettingOrder(1000, 5)).toEqual(order);
  });
});
