// Mutations of a valid JSON document, as fast-check arbitraries: delete, replace, retype or stretch values at
// random paths, rename or add keys, duplicate or drop array elements; and JSON text cut short or with a
// character swapped. Shrinking works on the list of mutations, so a failure shrinks to the fewest edits.
import fc from 'fast-check';

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
export type JsonPath = Array<string | number>;

export const MUTATION_KINDS = ['delete', 'replace', 'retype', 'extreme', 'rename-key', 'add-key', 'duplicate', 'empty'] as const;
export type MutationKind = (typeof MUTATION_KINDS)[number];

/** One edit: `at` picks the path (modulo the number of paths at the time it is applied). */
export interface Mutation {
  kind: MutationKind;
  at: number;
  value: Json;
  key: string;
}

/** Every path of `doc`, the root (`[]`) first, depth-first. */
export function jsonPaths(doc: Json): JsonPath[] {
  const out: JsonPath[] = [];
  const walk = (v: Json, path: JsonPath): void => {
    out.push(path);
    if (Array.isArray(v)) v.forEach((x, i) => walk(x, [...path, i]));
    else if (v !== null && typeof v === 'object') for (const [k, x] of Object.entries(v)) walk(x, [...path, k]);
  };
  walk(doc, []);
  return out;
}

export function getAt(doc: Json, path: JsonPath): Json | undefined {
  let v: Json | undefined = doc;
  for (const part of path) {
    if (v === null || typeof v !== 'object') return undefined;
    v = Array.isArray(v) ? v[part as number] : (v as Record<string, Json>)[part as string];
  }
  return v;
}

export function cloneJson<T extends Json>(doc: T): T {
  return doc === null || typeof doc !== 'object' ? doc : structuredClone(doc);
}

/** Values that break types and bounds: extreme numbers, huge and odd strings, deep nesting. */
const EXTREMES: Json[] = [
  1e308,
  -1e308,
  Number.MAX_SAFE_INTEGER + 2,
  -0,
  0,
  -1,
  0.5,
  2 ** 31,
  2 ** 53,
  1e-320,
  '',
  ' ',
  '\u0000',
  '\uFEFF',
  '\uD800',
  'NaN',
  'Infinity',
  '1e400',
  '9'.repeat(400),
  'é'.repeat(3000),
  'x'.repeat(100_000),
  '__proto__',
  '{"a":1}',
  [],
  {},
  [[[[[[[[[[[]]]]]]]]]]],
  Array.from({ length: 5000 }, () => 0),
];

function retype(v: Json): Json {
  if (v === null) return 0;
  if (typeof v === 'number') return String(v);
  if (typeof v === 'string') return v === '' ? 0 : Number.isNaN(Number(v)) ? [v] : Number(v);
  if (typeof v === 'boolean') return v ? 'true' : 0;
  if (Array.isArray(v)) return Object.fromEntries(v.map((x, i) => [String(i), x]));
  return Object.values(v);
}

function stretch(v: Json): Json {
  if (typeof v === 'string') return v.repeat(Math.max(1, Math.ceil(200_000 / Math.max(1, v.length))));
  if (Array.isArray(v) && v.length > 0) return Array.from({ length: 5000 }, (_, i) => cloneJson(v[i % v.length]));
  return v;
}

/** Applies `m` to `doc` in place (the root is replaced by returning the new one). */
export function applyMutation(doc: Json, m: Mutation): Json {
  const paths = jsonPaths(doc);
  const path = paths[m.at % paths.length];
  const current = getAt(doc, path) as Json;
  let next: Json | undefined;
  switch (m.kind) {
    case 'delete':
      next = undefined;
      break;
    case 'replace':
      next = cloneJson(m.value);
      break;
    case 'retype':
      next = retype(current);
      break;
    case 'extreme':
      next = m.at % 3 === 0 ? stretch(current) : cloneJson(EXTREMES[m.at % EXTREMES.length]);
      break;
    case 'empty':
      next = Array.isArray(current) ? [] : typeof current === 'string' ? '' : current !== null && typeof current === 'object' ? {} : null;
      break;
    case 'duplicate':
      if (Array.isArray(current) && current.length > 0) next = [...current, cloneJson(current[m.at % current.length])];
      else next = current;
      break;
    case 'add-key':
      if (current !== null && typeof current === 'object' && !Array.isArray(current)) next = { ...current, [m.key]: cloneJson(m.value) };
      else next = current;
      break;
    case 'rename-key':
      if (current !== null && typeof current === 'object' && !Array.isArray(current) && Object.keys(current).length > 0) {
        const keys = Object.keys(current);
        const old = keys[m.at % keys.length];
        next = Object.fromEntries(keys.map((k) => [k === old ? `${old}${m.key}` : k, current[k]]));
      } else next = current;
      break;
  }
  if (path.length === 0) return next === undefined ? null : next;
  const parent = getAt(doc, path.slice(0, -1)) as Json[] | Record<string, Json>;
  const last = path[path.length - 1];
  if (Array.isArray(parent)) {
    if (next === undefined) parent.splice(last as number, 1);
    else parent[last as number] = next;
  } else if (next === undefined) delete parent[last as string];
  // an own data property even for '__proto__' (plain assignment would set the prototype)
  else Object.defineProperty(parent, last as string, { value: next, writable: true, enumerable: true, configurable: true });
  return doc;
}

/**
 * The most JSON a mutated document may hold. Stretches compound (5000 copies of an entry holding a 200 kB string
 * is 1 GB), past what JSON.stringify can write at all, so no file, request or job could carry such a document; a
 * mutation that would take the document past this is skipped. 16 MB is still 16 times the inline job cap and
 * thousands of times a spec, enough to show a check that grows faster than its input.
 */
export const MAX_MUTATED_JSON_CHARS = 16_000_000;

function jsonLength(doc: Json): number {
  try {
    return JSON.stringify(doc)?.length ?? 0;
  } catch {
    return Infinity; // RangeError: Invalid string length
  }
}

/** the JSON length `doc` would have after `m`, for a stretch (the one mutation that multiplies a value); else null */
function lengthAfterStretch(doc: Json, m: Mutation): number | null {
  if (m.kind !== 'extreme' || m.at % 3 !== 0) return null;
  const paths = jsonPaths(doc);
  const value = getAt(doc, paths[m.at % paths.length]) as Json;
  const own = jsonLength(value);
  let stretched = own;
  if (typeof value === 'string') stretched = own * Math.max(1, Math.ceil(200_000 / Math.max(1, value.length)));
  else if (Array.isArray(value) && value.length > 0) stretched = Math.ceil(5000 / value.length) * own;
  return jsonLength(doc) - own + stretched;
}

export function applyMutations(doc: Json, mutations: readonly Mutation[]): Json {
  let out = cloneJson(doc);
  for (const m of mutations) {
    const stretched = lengthAfterStretch(out, m);
    if (stretched !== null && stretched > MAX_MUTATED_JSON_CHARS) continue;
    out = applyMutation(out, m);
  }
  return out;
}

/** A small random JSON value (what a replacement puts in). */
export const smallJson: fc.Arbitrary<Json> = fc.jsonValue({ maxDepth: 2, depthSize: 'small' }) as fc.Arbitrary<Json>;

export const mutationArb: fc.Arbitrary<Mutation> = fc.record({
  kind: fc.constantFrom(...MUTATION_KINDS),
  at: fc.nat(),
  value: smallJson,
  key: fc.oneof(fc.constantFrom('x', '_extra', 'constructor', '__proto__', ''), fc.string({ maxLength: 8 })),
});

/** `doc` after 1..maxEdits random mutations. */
export function mutatedJson(doc: Json, maxEdits = 4): fc.Arbitrary<Json> {
  return fc.array(mutationArb, { minLength: 1, maxLength: maxEdits }).map((ms) => applyMutations(doc, ms));
}

/** The JSON text of `doc` cut at a random point, or with one character replaced, inserted or removed. */
export function damagedJsonText(doc: Json): fc.Arbitrary<string> {
  const text = JSON.stringify(doc, null, 2);
  const ch = fc.constantFrom('{', '}', '[', ']', ',', ':', '"', '\\', '\u0000', '\n', 'x', '0', '\uFEFF', '\uD800');
  return fc.oneof(
    fc.nat({ max: text.length - 1 }).map((n) => text.slice(0, n)),
    fc.tuple(fc.nat({ max: text.length - 1 }), ch).map(([n, c]) => text.slice(0, n) + c + text.slice(n + 1)),
    fc.tuple(fc.nat({ max: text.length }), ch).map(([n, c]) => text.slice(0, n) + c + text.slice(n)),
    fc.nat({ max: text.length - 1 }).map((n) => text.slice(0, n) + text.slice(n + 1)),
  );
}
