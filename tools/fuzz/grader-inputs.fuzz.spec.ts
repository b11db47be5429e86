// Fuzz: the grader (libs/grading gradeCompletion, extractBoxed, isEquivalent and the normalisers) on hostile
// completions: braces nested 10^5 deep, megabyte strings, 1e308 and 400-digit numbers, any unicode, random
// LaTeX. Every call returns a well-typed result within its CPU bound (measured per call); the only errors are
// the lib's own (MissingGroundTruthError for a dataset answer without '####', LatexConversionError).
import fc from 'fast-check';
import { extractBoxed, gradeCompletion, isEquivalent, latexToText, MAX_ANSWER_CHARS, MissingGroundTruthError, normalizeAnswer, normalizeExpression, type GradeResult, LatexConversionError } from '@rx/grading';
import { fuzzParams, tryWithCpuTime } from './fuzz-config';
import { closedNested, completion, datasetAnswer, hugeNumber, latexFragment, megabyte, nested, unicode } from './grader-arbitraries';

/** CPU milliseconds one grading call may take, whatever the input. */
const GRADE_CPU_MS = 200;

function bounded<T>(what: string, fn: () => T, allowed: Array<new (...args: never[]) => Error> = []): T | undefined {
  const r = tryWithCpuTime(fn);
  if (r.cpuMs >= GRADE_CPU_MS) throw new Error(`${what} took ${r.cpuMs.toFixed(1)} ms of CPU (bound ${GRADE_CPU_MS} ms)`);
  if (r.error !== undefined) {
    if (allowed.some((E) => r.error instanceof E)) return undefined;
    throw new Error(`${what} threw ${r.error instanceof Error ? (r.error.stack ?? r.error.message) : String(r.error)}`);
  }
  return r.value;
}

// ---- checks ----

function expectGradeResult(r: GradeResult, completionText: string, endedOnStop: boolean, formatCoef: number): void {
  expect(typeof r.correct).toBe('boolean');
  expect(typeof r.formatOk).toBe('boolean');
  expect(r.extracted === null || typeof r.extracted === 'string').toBe(true);
  expect(r.extracted).toBe(extractBoxed(completionText));
  expect(r.formatOk).toBe(endedOnStop && r.extracted !== null);
  if (r.correct) expect(r.extracted).not.toBeNull();
  // reward = format_coef * (correct_format - 1) + correct_answer
  expect(r.reward).toBe(formatCoef * ((r.formatOk ? 1 : 0) - 1) + (r.correct ? 1 : 0));
}

function grade(c: string, answer: string, endedOnStop: boolean, formatCoef?: number): GradeResult | undefined {
  const r = bounded('gradeCompletion', () => gradeCompletion(c, answer, { endedOnStop, ...(formatCoef !== undefined ? { formatCoef } : {}) }), [MissingGroundTruthError]);
  // the cookbook raises only when no '####' has anything after it (the `####\s*(.+)` fallback finds nothing)
  if (r === undefined) expect(answer).not.toMatch(/####\s*[^\n]/);
  else expectGradeResult(r, c, endedOnStop, formatCoef ?? 0.1);
  return r;
}

describe('grader fuzz', () => {
  it('random completions and dataset answers: a well-typed grade within the bound, or MissingGroundTruthError', () => {
    fc.assert(
      fc.property(completion, datasetAnswer, fc.boolean(), fc.option(fc.constantFrom(0, 0.1, 0.5, 1)), (c, a, stop, coef) => {
        grade(c, a, stop, coef ?? undefined);
      }),
      fuzzParams(1),
    );
  });

  it('braces, \\frac, \\sqrt, \\boxed and parentheses nested up to 10^5 deep', () => {
    fc.assert(
      fc.property(nested, datasetAnswer, (c, a) => {
        grade(c, a, true);
      }),
      fuzzParams(0.2),
    );
  });

  it('megabyte completions', () => {
    fc.assert(
      fc.property(megabyte, (c) => {
        grade(c, 'Reasoning.\n#### 1', true);
      }),
      fuzzParams(0.03),
    );
  });

  it('extractBoxed: null or a substring of the completion that comes from a \\boxed', () => {
    fc.assert(
      fc.property(fc.oneof(completion, nested), (c) => {
        const x = bounded('extractBoxed', () => extractBoxed(c));
        if (x !== null && x !== undefined) {
          expect(c.includes(x)).toBe(true);
          expect(c).toContain('\\boxed');
        }
      }),
      fuzzParams(0.5),
    );
  });

  it('isEquivalent: a boolean within the bound; over-long answers are false; an answer equals itself', () => {
    const answer = fc.oneof(latexFragment, hugeNumber, unicode, closedNested);
    fc.assert(
      fc.property(answer, answer, (a, b) => {
        expect(typeof bounded('isEquivalent', () => isEquivalent(a, b))).toBe('boolean');
        expect(bounded('isEquivalent', () => isEquivalent(a, a))).toBe(a.length <= MAX_ANSWER_CHARS);
        if (a.length > MAX_ANSWER_CHARS) expect(bounded('isEquivalent', () => isEquivalent(a, b))).toBe(false);
      }),
      fuzzParams(0.5),
    );
  });

  it('normalizeAnswer, normalizeExpression and latexToText: strings within the bound (LatexConversionError aside)', () => {
    const input = fc.oneof(latexFragment, hugeNumber, unicode, closedNested.filter((s) => s.length <= MAX_ANSWER_CHARS));
    fc.assert(
      fc.property(input, (s) => {
        expect(typeof bounded('normalizeAnswer', () => normalizeAnswer(s))).toBe('string');
        expect(typeof bounded('normalizeExpression', () => normalizeExpression(s))).toBe('string');
        const text = bounded('latexToText', () => latexToText(s), [LatexConversionError]);
        if (text !== undefined) expect(typeof text).toBe('string');
      }),
      fuzzParams(0.3),
    );
  });

  it('a boxed integer (up to 400 digits) grades correct against the same #### answer', () => {
    const integer = fc.oneof(fc.integer().map(String), fc.bigInt({ min: -(10n ** 400n), max: 10n ** 400n }).map(String));
    fc.assert(
      fc.property(integer, latexFragment.map((s) => s.replace(/[{}\\]/g, '')), (n, prefix) => {
        const r = grade(`${prefix}\n\\boxed{${n}}`, `Because.\n#### ${n}`, true);
        expect(r).toMatchObject({ correct: true, formatOk: true, extracted: n, reward: 1 });
      }),
      fuzzParams(0.2),
    );
  });

  // FIXED (was a BUG, now guarded): libs/grading/src/latex-to-text.ts (the Walker behind latexToText, reached from gradeCompletion through
  // isEquivalent -> normalizeExpression) takes time exponential in the number of groups LaTeX sees unclosed: a
  // macro argument that hits the end of the text is given up (EndOfStream -> null) and the rest is parsed again,
  // at every level. '\}' is a closing brace to extractBoxed but a literal to LaTeX, so this 182-character
  // completion (n = 20) extracts fine and then takes ~20 s in gradeCompletion; each level doubles it (n = 16:
  // 0.6 s, n = 30: hours), and FRAME_BUDGET only stops nestings of ~120+. A model can write this. Bound the
  // work (count tokens read) or memoise by position.
  it('groups hidden from LaTeX by \\} stay within the time bound', () => {
    const n = 16;
    const c = `The answer is \\boxed{${'\\frac{'.repeat(n)}${'\\}'.repeat(n)}}`;
    expect(extractBoxed(c)).toBe(`${'\\frac{'.repeat(n)}${'\\}'.repeat(n)}`);
    grade(c, 'Because.\n#### 1', true);
  });

  // FIXED (was a BUG, now guarded): libs/grading/src/numeric-expression.ts:83-88 (isqrt) seeds the integer square root with a float and then
  // steps by 1 (`x--` / `x++`) to the exact root: about sqrt(n) * 2^-53 steps, so the root of a large integer runs
  // for seconds or forever. isEquivalent reaches it when neither side is an integer: gradeCompletion of
  // `\\boxed{\\sqrt{3**100}}` against "#### 2.5" takes about a second; `\\boxed{\\sqrt{2**1023}}` (18 characters)
  // against "#### 2.5" or "#### 1/2" never returns. Use Newton's iteration on bigints (or refuse large roots).
  it('the square root of a large integer stays within the time bound', () => {
    grade('\\boxed{\\sqrt{3**100}}', 'Because.\n#### 2.5', true);
  });

  // FIXED (was a BUG, now guarded): the same isqrt (libs/grading/src/numeric-expression.ts:85) turns a root argument above ~1.8e308 into
  // BigInt(Infinity), a RangeError that escapes isEquivalent and gradeCompletion: `\\boxed{\\sqrt{10**400}}`
  // against "#### 2.5" throws "The number Infinity cannot be converted to a BigInt" (so `rx grade` on that line
  // ends in "rx: internal error" with a stack trace, and a grader job fails on it).
  it('the square root of a 400-digit integer grades (false) instead of throwing', () => {
    expect(grade('\\boxed{\\sqrt{10**400}}', 'Because.\n#### 2.5', true)).toMatchObject({ correct: false, formatOk: true });
  });
});
