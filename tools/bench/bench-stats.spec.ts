import { fmt, median, scalingEfficiency, summarize, sum, verdict } from './bench-stats';
import { SECTION_ORDER, upsertSection } from './benchmarks-doc';

describe('bench-stats', () => {
  it('median and quartiles interpolate between order statistics', () => {
    expect(median([5, 1, 3])).toBe(3);
    expect(median([4, 1, 3, 2])).toBe(2.5);
    // sorted 1 2 3 4 5 6 7 8 9: p25 at position 2 -> 3, p75 at position 6 -> 7
    expect(summarize([9, 1, 8, 2, 7, 3, 6, 4, 5])).toEqual({ n: 9, median: 5, p25: 3, p75: 7, min: 1, max: 9 });
    expect(sum([0.5, 1.5, 2])).toBe(4);
  });

  it('scaling efficiency is the speed-up over the worker count', () => {
    expect(scalingEfficiency(100, 400, 4)).toBe(1);
    expect(scalingEfficiency(100, 320, 4)).toBeCloseTo(0.8, 12);
    expect(scalingEfficiency(100, 100, 2)).toBe(0.5);
    expect(() => scalingEfficiency(0, 10, 2)).toThrow(RangeError);
  });

  it('formats with significant digits and names the gap to a target', () => {
    expect(fmt(1234.5)).toBe('1235');
    expect(fmt(1.23456)).toBe('1.23');
    expect(fmt(0.0012345)).toBe('0.00123');
    expect(fmt(0)).toBe('0');
    expect(verdict(1.01, 1.02, 'max')).toBe('met (target <= 1.02)');
    expect(verdict(1.5, 1.2, 'max')).toBe('MISSED by 0.300 (target <= 1.20)');
    expect(verdict(0.7, 0.8, 'min')).toBe('MISSED by 0.100 (target >= 0.800)');
  });
});

describe('BENCHMARKS.md sections', () => {
  it('adds sections in benchmark order and replaces one in place, leaving text outside the markers', () => {
    let doc = upsertSection('', 'memory', 'M1');
    doc = upsertSection(doc, 'overhead', 'O1');
    doc = upsertSection(doc, 'scale-out', 'S1');
    doc += '\n## Notes by hand\nkept\n';
    const order = [...doc.matchAll(/<!-- bench:([a-z-]+) -->/g)].map((m) => m[1]);
    expect(order).toEqual(['overhead', 'scale-out', 'memory']);
    expect(order).toEqual(SECTION_ORDER.filter((n) => order.includes(n)));
    const again = upsertSection(doc, 'scale-out', 'S2\nmore');
    expect(again).toContain('<!-- bench:scale-out -->\nS2\nmore\n<!-- /bench:scale-out -->');
    expect(again).not.toContain('S1');
    expect(again).toContain('O1');
    expect(again).toContain('## Notes by hand\nkept');
    expect(again.startsWith('# Benchmarks')).toBe(true);
  });

  it('refuses a section whose end marker was lost', () => {
    expect(() => upsertSection('<!-- bench:overhead -->\nno end', 'overhead', 'x')).toThrow(/end marker/);
  });
});
