// Fuzz: the payload schema of every queue in the catalog. Mutations of a valid payload and random JSON go
// through safeParse (never a throw, bounded time, path-named issues; what it accepts is plain JSON that parses
// again to the same value), and every string and array stretched far past any sensible size is refused.
import fc from 'fast-check';
import { QUEUE_CATALOG, QUEUE_NAME_LIST, type QueueName } from '@rx/contracts';
import type { z } from 'zod';
import { fuzzParams, tryWithCpuTime } from './fuzz-config';
import { getAt, jsonPaths, mutatedJson, type Json, type JsonPath } from './json-mutation';
import { validPayloads } from './valid-payloads';

/** CPU milliseconds one safeParse may take (a valid batch of 8 rollouts takes well under 1 ms) ... */
const PARSE_CPU_MS = 250;
/**
 * ... plus this much per MB of its JSON: a parse is linear in the payload, and compounded mutations reach
 * 250 MB (5000 prompts, a quarter of them with a 200 kB string: about 1 s of CPU, 4 ms/MB, on CI). What the
 * bound is for is a parse that grows faster than its input (backtracking, quadratic issue lists).
 */
const PARSE_CPU_MS_PER_MB = 20;
/** ... and one of a payload with a field stretched (5000 batch entries, 10^5 tokens, 10^6 characters). */
const STRETCHED_CPU_MS = 1000;

const OBJECT_ARRAY_STRETCH = 5000; // past the 4096 batch bound of the schemas
const PRIMITIVE_ARRAY_STRETCH = 100_001; // token ids, logprobs, issues: far past any completion length
const STRING_STRETCH = 1_000_001; // past the 1 MB inline payload limit on its own

const payloads = validPayloads();

function safeParse(schema: z.ZodTypeAny, data: unknown, baseCpuLimitMs: number): z.SafeParseReturnType<unknown, unknown> {
  const r = tryWithCpuTime(() => schema.safeParse(data));
  if (r.error !== undefined) throw new Error(`safeParse threw: ${r.error instanceof Error ? r.error.stack : String(r.error)}`);
  const megabytes = (JSON.stringify(data)?.length ?? 0) / 1e6;
  expect(r.cpuMs).toBeLessThan(baseCpuLimitMs + PARSE_CPU_MS_PER_MB * megabytes);
  return r.value as z.SafeParseReturnType<unknown, unknown>;
}

/** An accepted payload is JSON data (no NaN, no undefined holes) that parses again to itself. */
function expectStableAcceptance(schema: z.ZodTypeAny, data: unknown): void {
  const text = JSON.stringify(data);
  const again = schema.safeParse(JSON.parse(text));
  expect(again.success).toBe(true);
  if (again.success) expect(JSON.stringify(again.data)).toBe(text);
}

/** Rejections name their issues: a message each, and a path whenever the payload is an object. */
function badIssues(error: z.ZodError, data: unknown): z.ZodIssue[] {
  const isObject = data !== null && typeof data === 'object' && !Array.isArray(data);
  return error.issues.filter((i) => typeof i.message !== 'string' || i.message.trim() === '' || (isObject && i.path.length === 0 && i.code !== 'invalid_type'));
}

/** String and array leaves of `doc`, looking into the first element of each array only. */
function stretchablePaths(doc: Json): JsonPath[] {
  return jsonPaths(doc).filter((p) => {
    if (p.length === 0 || p.some((part) => typeof part === 'number' && part !== 0)) return false;
    const v = getAt(doc, p);
    return typeof v === 'string' || (Array.isArray(v) && v.length > 0);
  });
}

function stretch(v: string | Json[]): Json {
  if (typeof v === 'string') return (v || 'x').repeat(Math.ceil(STRING_STRETCH / Math.max(1, v.length)));
  const length = typeof v[0] === 'object' && v[0] !== null ? OBJECT_ARRAY_STRETCH : PRIMITIVE_ARRAY_STRETCH;
  return Array.from({ length }, (_, i) => v[i % v.length]);
}

/** `doc` with the value at `p` stretched; a rollout's logprobs grow with its tokens (one per token). */
function stretched(doc: Json, p: JsonPath): Json {
  const out = structuredClone(doc);
  const parent = getAt(out, p.slice(0, -1)) as Record<string | number, Json>;
  const last = p[p.length - 1];
  parent[last] = stretch(parent[last] as string | Json[]);
  if (last === 'tokens' && Array.isArray(parent.logprobs)) parent.logprobs = stretch(parent.logprobs);
  return out;
}

/** Fields the schemas leave unbounded (none since the fix of the BUG test below); every other stretched field must be refused. */
const KNOWN_UNBOUNDED: Record<QueueName, string[]> = {
  'step-requests': [],
  'sample-requests': [],
  rollouts: [],
  'graded-rollouts': [],
  'train-steps': [],
  'step-events': [],
  'dead-letters': [],
};

const startsWith = (path: ReadonlyArray<string | number>, prefix: JsonPath) => prefix.every((part, i) => path[i] === part);

describe.each(QUEUE_NAME_LIST.map((q) => [q]))('queue payload fuzz: %s', (queue: QueueName) => {
  const schema: z.ZodTypeAny = QUEUE_CATALOG[queue].schema;
  const valid = payloads[queue] as unknown as Json;

  it('accepts the valid payload the mutations start from', () => {
    const r = safeParse(schema, valid, PARSE_CPU_MS);
    expect(r.success ? [] : r.error.issues).toEqual([]);
    expectStableAcceptance(schema, valid);
  });

  it('mutated payloads: safeParse never throws, is bounded in time, names each issue', () => {
    fc.assert(
      fc.property(mutatedJson(valid), (data) => {
        const r = safeParse(schema, data, PARSE_CPU_MS);
        if (r.success) expectStableAcceptance(schema, r.data);
        else {
          expect(r.error.issues.length).toBeGreaterThan(0);
          expect(badIssues(r.error, data)).toEqual([]);
        }
      }),
      fuzzParams(0.15),
    );
  });

  it('random JSON is refused with named issues', () => {
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 3 }), (data) => {
        const r = safeParse(schema, data, PARSE_CPU_MS);
        expect(r.success).toBe(false);
        if (!r.success) expect(badIssues(r.error, data)).toEqual([]);
      }),
      fuzzParams(0.05),
    );
  });

  it('a stretched string or array: never a throw, bounded time, refused (but for the known unbounded fields) naming the field', () => {
    const unnamed: string[] = [];
    const accepted: string[] = [];
    const paths = stretchablePaths(valid);
    expect(paths.length).toBeGreaterThan(3);
    for (const p of paths) {
      const data = stretched(valid, p);
      const r = safeParse(schema, data, STRETCHED_CPU_MS);
      if (r.success) accepted.push(p.join('.'));
      // named: the field itself, a field beside it (tokens stretched: "logprobs: 100001 tokens but 3 logprobs"),
      // or a container of it (a batch grown past 4096 entries)
      const near = (i: z.ZodIssue) => startsWith(i.path, p.slice(0, -1)) || startsWith(p, i.path as JsonPath);
      if (!r.success && !r.error.issues.some(near)) unnamed.push(`${p.join('.')}: ${r.error.issues.slice(0, 3).map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`);
    }
    expect(unnamed).toEqual([]);
    expect(accepted.filter((p) => !KNOWN_UNBOUNDED[queue].includes(p))).toEqual([]);
  });

  // FIXED (was a BUG, now guarded): libs/contracts leaves these fields without a maximum, so one field alone can outgrow the 1 MB inline
  // payload limit (INLINE_PAYLOAD_LIMIT_BYTES) and the schema still accepts it: tokenArraySchema
  // (prompt.schema.ts:5: prompts[].tokens, and rollouts[].tokens with logprobArraySchema, sampled-batch.schema.ts:13),
  // step-record.schema.ts:19 `rollouts` and :29 `samplerPath`, step-request.schema.ts:19 `initStatePath`,
  // dead-letter.schema.ts:7 `sourceJobId` and :12 `issues[].path` / `issues[].message` (KNOWN_UNBOUNDED; empty it with the fix).
  it('every string and array is bounded by the schema', () => {
    const accepted = stretchablePaths(valid).filter((p) => safeParse(schema, stretched(valid, p), STRETCHED_CPU_MS).success);
    expect(accepted.map((p) => p.join('.'))).toEqual([]);
  });
});
