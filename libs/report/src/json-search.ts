// Finding the parts of a JSON document that match a schema wherever they sit, so the report reads a run file
// without depending on how deeply the controller nests a gate report or a decision.
import type { z } from 'zod';

export type JsonPath = ReadonlyArray<string | number>;

export interface Found<T> {
  value: T;
  path: JsonPath;
  /** the enclosing values, outermost first (the document itself first) */
  ancestors: readonly unknown[];
}

/** Every value matching the schema, depth first in document order; a match is not searched inside. */
export function findAll<S extends z.ZodTypeAny>(root: unknown, schema: S): Found<z.infer<S>>[] {
  const out: Found<z.infer<S>>[] = [];
  const visit = (value: unknown, path: Array<string | number>, ancestors: unknown[]): void => {
    if (value === null || typeof value !== 'object') return;
    const parsed = schema.safeParse(value);
    if (parsed.success) {
      out.push({ value: parsed.data, path: [...path], ancestors: [...ancestors] });
      return;
    }
    const next = [...ancestors, value];
    if (Array.isArray(value)) value.forEach((v, i) => visit(v, [...path, i], next));
    else for (const [k, v] of Object.entries(value as Record<string, unknown>)) visit(v, [...path, k], next);
  };
  visit(root, [], []);
  return out;
}

/** The first match, or null. */
export function findFirst<S extends z.ZodTypeAny>(root: unknown, schema: S): Found<z.infer<S>> | null {
  return findAll(root, schema)[0] ?? null;
}

/** `attempts[0].gates` */
export function formatPath(path: JsonPath): string {
  return path.map((p, i) => (typeof p === 'number' ? `[${p}]` : i === 0 ? p : `.${p}`)).join('');
}

/** JSON with object keys sorted at every level: equal values give equal text. */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(sortKeys(value));
}

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const k of Object.keys(value as Record<string, unknown>).sort()) out[k] = sortKeys((value as Record<string, unknown>)[k]);
    return out;
  }
  return value;
}
