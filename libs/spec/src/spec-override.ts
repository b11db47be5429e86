// A spec with some fields changed (reduced test runs), validated again like any spec.
import type { ExperimentSpec } from './experiment-spec.schema';
import { parseSpec, type SpecParseResult } from './parse-spec';

export type DeepPartial<T> = T extends ReadonlyArray<infer E> ? ReadonlyArray<DeepPartial<E>> : T extends object ? { [K in keyof T]?: DeepPartial<T[K]> } : T;

export type SpecOverride = DeepPartial<ExperimentSpec>;

/** array elements are matched on the first of these keys that every element carries */
const ELEMENT_KEYS = ['name', 'metric', 'id'] as const;

/**
 * Deep merge, then parseSpec. Objects merge key by key; `undefined` leaves a field alone; scalars and null replace.
 * An array of objects keyed by `name`, `metric` or `id` (arms, gate checks, criteria, preflight paths) merges
 * element by element when every override element names an existing element; any other array replaces the old one.
 */
export function applySpecOverride(spec: ExperimentSpec, partial: SpecOverride): SpecParseResult {
  return parseSpec(merge(spec, partial));
}

function merge(base: unknown, over: unknown): unknown {
  if (over === undefined) return base;
  if (Array.isArray(over)) return Array.isArray(base) ? mergeArray(base, over) : over;
  if (isPlainObject(over) && isPlainObject(base)) {
    const out: Record<string, unknown> = { ...base };
    for (const [k, v] of Object.entries(over)) if (v !== undefined) out[k] = merge(base[k], v);
    return out;
  }
  return over;
}

function mergeArray(base: unknown[], over: unknown[]): unknown[] {
  const key = ELEMENT_KEYS.find((k) => base.length > 0 && base.every((e) => isPlainObject(e) && typeof e[k] === 'string'));
  if (!key) return over;
  const index = new Map(base.map((e, i) => [(e as Record<string, unknown>)[key], i]));
  const matched = over.every((e) => isPlainObject(e) && index.has(e[key]));
  if (!matched) return over;
  const out = [...base];
  for (const e of over as Array<Record<string, unknown>>) {
    const i = index.get(e[key]) as number;
    out[i] = merge(out[i], e);
  }
  return out;
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
