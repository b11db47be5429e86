// Per-item eval files (`{"item_id": ..., "correct": true|false}` per line) parsed and paired by item_id.
import { pairedHoeffding, type HoeffdingResult, type HoeffdingRule } from './paired-hoeffding';

export type ItemId = string | number;

/** One line of a per-item eval file. */
export interface ItemLine {
  itemId: ItemId;
  correct: boolean;
  /** 1-based line number in its file */
  line: number;
}

/** The text of one per-item eval file and the name to use for it in messages. */
export interface ItemFile {
  source: string;
  text: string;
}

export interface PairedItems {
  itemIds: ItemId[];
  /** 1 for correct, 0 for wrong, in the order of itemIds */
  treatment: number[];
  baseline: number[];
}

/** A malformed or unpairable eval file; the message names the file and line. */
export class PairedItemsError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'PairedItemsError';
  }
}

/** Parses JSONL text; blank lines are skipped, other fields on a line are ignored. Throws PairedItemsError. */
export function parseItemLines(file: ItemFile): ItemLine[] {
  const items: ItemLine[] = [];
  const firstSeen = new Map<string, number>();
  file.text.split('\n').forEach((raw, index) => {
    const line = index + 1;
    const text = raw.trim();
    if (text === '') return;
    const where = `${oneLine(file.source)}:${line}`;
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      throw new PairedItemsError(`${where}: not valid JSON`);
    }
    if (typeof value !== 'object' || value === null || Array.isArray(value)) {
      throw new PairedItemsError(`${where}: expected an object {"item_id": ..., "correct": true|false}`);
    }
    const record = value as Record<string, unknown>;
    const itemId = record['item_id'];
    const correct = record['correct'];
    if (typeof itemId === 'number' && (Number.isInteger(itemId) || !Number.isFinite(itemId)) && !Number.isSafeInteger(itemId)) {
      // JSON.parse rounds integers past 2^53 to a neighbour (another item's id) and makes larger ones Infinity
      throw new PairedItemsError(`${where}: item_id is a number too large to keep exactly (integer ids go up to ${Number.MAX_SAFE_INTEGER}); write it as a string`);
    }
    if (!(typeof itemId === 'string' && itemId !== '') && !(typeof itemId === 'number' && Number.isInteger(itemId))) {
      throw new PairedItemsError(`${where}: item_id must be a non-empty string or an integer, got ${describe(itemId)}`);
    }
    if (typeof correct !== 'boolean') {
      throw new PairedItemsError(`${where}: correct must be true or false, got ${describe(correct)}`);
    }
    const key = itemKey(itemId);
    const earlier = firstSeen.get(key);
    if (earlier !== undefined) {
      throw new PairedItemsError(`${where}: duplicate item_id ${describe(itemId)} (first on line ${earlier})`);
    }
    firstSeen.set(key, line);
    items.push({ itemId, correct, line });
  });
  if (items.length === 0) throw new PairedItemsError(`${file.source}: no items`);
  return items;
}

/** Pairs two parsed files by item_id (treatment order); the item sets must be equal. Throws PairedItemsError. */
export function pairItems(treatment: { source: string; items: readonly ItemLine[] }, baseline: { source: string; items: readonly ItemLine[] }): PairedItems {
  const baselineByKey = new Map(baseline.items.map((it) => [itemKey(it.itemId), it]));
  const treatmentKeys = new Set(treatment.items.map((it) => itemKey(it.itemId)));
  const onlyTreatment = treatment.items.filter((it) => !baselineByKey.has(itemKey(it.itemId)));
  const onlyBaseline = baseline.items.filter((it) => !treatmentKeys.has(itemKey(it.itemId)));
  if (onlyTreatment.length > 0 || onlyBaseline.length > 0) {
    const parts: string[] = [];
    if (onlyTreatment.length > 0) parts.push(`${onlyTreatment.length} only in ${oneLine(treatment.source)} (${sample(onlyTreatment)})`);
    if (onlyBaseline.length > 0) parts.push(`${onlyBaseline.length} only in ${oneLine(baseline.source)} (${sample(onlyBaseline)})`);
    throw new PairedItemsError(`item sets differ: ${parts.join('; ')}`);
  }
  const result: PairedItems = { itemIds: [], treatment: [], baseline: [] };
  for (const it of treatment.items) {
    const other = baselineByKey.get(itemKey(it.itemId)) as ItemLine;
    result.itemIds.push(it.itemId);
    result.treatment.push(it.correct ? 1 : 0);
    result.baseline.push(other.correct ? 1 : 0);
  }
  return result;
}

/** Parse, pair and score two per-item eval files under one decision-rule criterion. */
export function decidePairedItems(treatment: ItemFile, baseline: ItemFile, rule: HoeffdingRule): HoeffdingResult {
  const paired = pairItems(
    { source: treatment.source, items: parseItemLines(treatment) },
    { source: baseline.source, items: parseItemLines(baseline) },
  );
  return pairedHoeffding(paired.treatment, paired.baseline, rule);
}

function itemKey(id: ItemId): string {
  return `${typeof id}:${id}`;
}

function sample(items: readonly ItemLine[]): string {
  const shown = items.slice(0, 3).map((it) => `item_id ${describe(it.itemId)} line ${it.line}`);
  return items.length > 3 ? `${shown.join(', ')}, ...` : shown.join(', ');
}

// a file name as given, or JSON-quoted where it holds a control character (a line break would split the message)
function oneLine(source: string): string {
  return /[\u0000-\u001f\u007f\u2028\u2029]/.test(source) ? JSON.stringify(source) : source;
}

function describe(v: unknown): string {
  if (v === undefined) return 'nothing';
  const s = JSON.stringify(v);
  return s.length > 40 ? `${s.slice(0, 40)}...` : s;
}
