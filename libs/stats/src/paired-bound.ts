// The three bounds a spec can pre-register for its paired decision (`decision_rule.bound`), one entry point for all:
// `hoeffding` (the default, the published spec's), `empirical_bernstein` and `betting` (its items in an order fixed
// by the pre-registered seed). The verdict reads only the pre-registered one; the others are exploratory.
import { pairedBetting, bettingOrder } from './betting';
import { pairedEmpiricalBernstein } from './empirical-bernstein';
import { hoeffdingRecord, pairedHoeffding, type HoeffdingRecord, type HoeffdingResult, type HoeffdingRule } from './paired-hoeffding';
import { pairItems, parseItemLines, type ItemFile, type PairedItems } from './paired-items';

export const BOUND_NAMES = ['hoeffding', 'empirical_bernstein', 'betting'] as const;
export type BoundName = (typeof BOUND_NAMES)[number];
export const DEFAULT_BOUND: BoundName = 'hoeffding';

/** each bound's name in words (progress lines, rx plan, the report) */
export const BOUND_LABELS: Record<BoundName, string> = { hoeffding: 'paired Hoeffding', empirical_bernstein: 'empirical Bernstein', betting: 'betting' };

export interface PairedBoundRule extends HoeffdingRule {
  bound: BoundName;
  /** the seed of the betting bound's item order (bettingOrder over the items sorted by item_id) */
  orderSeed: number;
}

/** one bound's result as the run and `rx decide --all-bounds` write it */
export interface BoundRecord extends HoeffdingRecord {
  bound: BoundName;
}

/** The items in the order the betting bound takes them: sorted by item_id, then permuted by bettingOrder(n, seed). */
export function bettingItems(paired: PairedItems, seed: number): { treatment: number[]; baseline: number[] } {
  const sorted = paired.itemIds
    .map((id, i) => ({ key: `${typeof id}:${id}`, i }))
    .sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0))
    .map((x) => x.i);
  const order = bettingOrder(sorted.length, seed).map((k) => sorted[k]);
  return { treatment: order.map((i) => paired.treatment[i]), baseline: order.map((i) => paired.baseline[i]) };
}

/** the paired items under one bound */
export function pairedBound(paired: PairedItems, rule: PairedBoundRule, bound: BoundName = rule.bound): HoeffdingResult {
  if (bound === 'hoeffding') return pairedHoeffding(paired.treatment, paired.baseline, rule);
  if (bound === 'empirical_bernstein') return pairedEmpiricalBernstein(paired.treatment, paired.baseline, rule);
  const ordered = bettingItems(paired, rule.orderSeed);
  return pairedBetting(ordered.treatment, ordered.baseline, rule);
}

export function boundRecord(bound: BoundName, result: HoeffdingResult): BoundRecord {
  return { bound, ...hoeffdingRecord(result) };
}

/** every bound rx offers on the same pairs, the pre-registered one first */
export function allBoundRecords(paired: PairedItems, rule: PairedBoundRule): BoundRecord[] {
  const names = [rule.bound, ...BOUND_NAMES.filter((b) => b !== rule.bound)];
  return names.map((b) => boundRecord(b, pairedBound(paired, rule, b)));
}

/** Parse and pair two per-item eval files (PairedItemsError on a bad one). */
export function pairItemFiles(treatment: ItemFile, baseline: ItemFile): PairedItems {
  return pairItems({ source: treatment.source, items: parseItemLines(treatment) }, { source: baseline.source, items: parseItemLines(baseline) });
}
