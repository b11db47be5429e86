import { z } from 'zod';
import { numberArraySchema, type NumberArrayRules } from './number-array.schema';

// The reference is zod's own per-element schema, which numberArraySchema replaces: for every input, the same
// verdict and the same issues (code, path, message), nested in an object as the batch schemas nest them.
function zodReference(rules: NumberArrayRules): z.ZodTypeAny {
  let n = z.number();
  if (rules.int) n = n.int();
  if (rules.nonnegative) n = n.nonnegative();
  if (rules.finite) n = n.finite();
  let a = z.array(n).max(rules.max);
  if (rules.min !== undefined) a = a.min(rules.min);
  return a;
}

const RULES: NumberArrayRules[] = [
  { int: true, nonnegative: true, max: 8 },
  { int: true, nonnegative: true, min: 1, max: 8 },
  { finite: true, max: 8 },
  { max: 3 },
];

const DAMAGED: unknown[] = [
  undefined,
  null,
  'not an array',
  { 0: 1 },
  [],
  [1, 2, 3],
  [0, 1.5, 2],
  [-1, 2],
  [-1.5],
  [1, '2', 3],
  [NaN],
  [Infinity, -Infinity],
  [null, true, {}, []],
  [1, 2, 3, 4, 5, 6, 7, 8, 9],
  [1, 2, 3, 4, 5, 6, 7, 8, -9.5, 'x'],
  [-0, 0, 1e308],
];

function seeded(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

function randomArray(rand: () => number): unknown[] {
  const pool: unknown[] = [0, 1, 7, 31999, -1, 0.5, -2.25, NaN, Infinity, -Infinity, '3', null, undefined, true];
  return Array.from({ length: Math.floor(rand() * 10) }, () => (rand() < 0.7 ? Math.floor(rand() * 50) : pool[Math.floor(rand() * pool.length)]));
}

// the refinement around it runs, as with zod, only where the arrays are arrays of numbers (a dirty parse), and reads them
function verdict(schema: z.ZodTypeAny, value: unknown) {
  const batch = z.object({ rollouts: z.array(z.object({ tokens: schema })) }).superRefine((b, ctx) => {
    ctx.addIssue({ code: 'custom', message: `lengths ${b.rollouts.map((r) => (r.tokens as unknown[]).length).join(',')}` });
  });
  const r = batch.safeParse({ rollouts: [{ tokens: [0] }, { tokens: value }] });
  return r.success ? { success: true as const, data: r.data } : { success: false as const, issues: r.error.issues.map((i) => ({ code: i.code, path: i.path, message: i.message })) };
}

describe('numberArraySchema', () => {
  it.each(RULES.map((r) => [JSON.stringify(r), r] as const))('gives the issues z.array gives, %s', (_name, rules) => {
    const rand = seeded(7);
    const inputs = [...DAMAGED, ...Array.from({ length: 400 }, () => randomArray(rand))];
    let failing = 0;
    for (const input of inputs) {
      const expected = verdict(zodReference(rules), input);
      expect({ input, ...verdict(numberArraySchema(rules), input) }).toEqual({ input, ...expected });
      if (!expected.success) failing++;
    }
    expect(failing).toBeGreaterThan(100); // the comparison covers damaged arrays, not only valid ones
  });

  it('passes a valid array through as it came', () => {
    const tokens = [3, 1, 4, 1, 5];
    expect(numberArraySchema({ int: true, nonnegative: true, max: 10 }).parse(tokens)).toBe(tokens);
  });
});
