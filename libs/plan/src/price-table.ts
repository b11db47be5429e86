// The pinned price table `rx plan` turns tokens into money with: US dollars per million tokens for each backend and
// base model, each entry with the page it was read from and the date. An entry is added only with a source; no
// price is estimated or carried over from another model. The table is empty: no price of Tinker's for
// Qwen/Qwen3.5-2B was available from a source rx can cite when this file was written (2026-12-04), so `rx plan`
// prints tokens only and says so.

export interface PriceEntry {
  backend: 'tinker' | 'embedded';
  base_model: string;
  /** USD per million tokens */
  usd_per_million: { prefill: number; sample: number; train: number };
  /** where the prices were read (a URL) */
  source: string;
  /** when they were read, YYYY-MM-DD */
  date: string;
}

export const PRICE_TABLE: { version: 1; entries: readonly PriceEntry[] } = { version: 1, entries: [] };

export function priceFor(backend: string, baseModel: string, table: { entries: readonly PriceEntry[] } = PRICE_TABLE): PriceEntry | null {
  return table.entries.find((e) => e.backend === backend && e.base_model === baseModel) ?? null;
}
