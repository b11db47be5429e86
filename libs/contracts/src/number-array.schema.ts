// Token ids and logprobs are the bulk of every batch payload (each rollout carries its completion's tokens and
// logprobs). z.array(z.number()) checks each number through zod's per-element machinery (a path object, a context
// and a result per element), which made validation the largest cost of a queue hop in the services. A number
// array schema checks the numbers in one loop and reports the issues z.array would, at the same paths, with the
// same codes and messages (number-array.schema.spec.ts compares the two on valid and damaged arrays). As with zod,
// a value of the wrong type (not an array, an element not a number) aborts the parse (fatal), so the refinements
// of the objects around it (checkBatchConsistency) never see it; a number out of its rules only marks it dirty.
import { getParsedType, z, ZodIssueCode, ZodParsedType, type RefinementCtx } from 'zod';

export interface NumberArrayRules {
  /** every element an integer (z.number().int()) */
  int?: boolean;
  /** every element >= 0 (z.number().nonnegative()) */
  nonnegative?: boolean;
  /** every element finite (z.number().finite()) */
  finite?: boolean;
  /** fewest elements (z.array().min()) */
  min?: number;
  /** most elements (z.array().max()) */
  max: number;
}

function checkElement(x: unknown, path: number, rules: NumberArrayRules, ctx: RefinementCtx): boolean {
  if (typeof x !== 'number' || Number.isNaN(x)) {
    ctx.addIssue({ code: ZodIssueCode.invalid_type, expected: ZodParsedType.number, received: getParsedType(x), path: [path], fatal: true });
    return false;
  }
  let ok = true;
  // the checks in the order zod runs them for z.number().int().nonnegative() / z.number().finite()
  if (rules.int && !Number.isInteger(x)) {
    ctx.addIssue({ code: ZodIssueCode.invalid_type, expected: 'integer', received: 'float', message: 'Expected integer, received float', path: [path] });
    ok = false;
  }
  if (rules.nonnegative && x < 0) {
    ctx.addIssue({ code: ZodIssueCode.too_small, minimum: 0, type: 'number', inclusive: true, exact: false, path: [path] });
    ok = false;
  }
  if (rules.finite && !Number.isFinite(x)) {
    ctx.addIssue({ code: ZodIssueCode.not_finite, path: [path] });
    ok = false;
  }
  return ok;
}

/** An array of numbers under `rules`; its parse returns the input array itself (z.array returns a copy). */
export function numberArraySchema(rules: NumberArrayRules) {
  return z.unknown().superRefine((value, ctx): value is number[] => {
    if (!Array.isArray(value)) {
      ctx.addIssue({ code: ZodIssueCode.invalid_type, expected: ZodParsedType.array, received: getParsedType(value), fatal: true });
      return false;
    }
    let ok = true;
    if (rules.min !== undefined && value.length < rules.min) {
      ctx.addIssue({ code: ZodIssueCode.too_small, minimum: rules.min, type: 'array', inclusive: true, exact: false });
      ok = false;
    }
    if (value.length > rules.max) {
      ctx.addIssue({ code: ZodIssueCode.too_big, maximum: rules.max, type: 'array', inclusive: true, exact: false });
      ok = false;
    }
    for (let i = 0; i < value.length; i++) {
      const x: unknown = value[i];
      // the common case, a number that passes every rule, in one test
      if (typeof x === 'number' && !Number.isNaN(x) && (!rules.int || Number.isInteger(x)) && (!rules.nonnegative || x >= 0) && (!rules.finite || Number.isFinite(x))) continue;
      if (!checkElement(x, i, rules, ctx)) ok = false;
    }
    return ok;
  });
}
