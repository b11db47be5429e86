// Hostile grader inputs as fast-check arbitraries: random LaTeX, huge numbers, deep nesting, megabyte text,
// any unicode; completions and GSM8K-style dataset answers built from them.
import fc from 'fast-check';

export const LATEX_TOKENS = [
  '\\frac', '\\dfrac', '\\tfrac', '\\sqrt', '\\sqrt[3]', '{', '}', '{', '}', '^', '_', '\\left(', '\\right)', '\\left[', '\\right]',
  '\\text{', '\\mathrm{', '\\mbox{', '\\textbf{', '\\pi', '\\cdot', '\\times', '\\div', '\\%', '\\$', '$', '$$', '\\!', '\\,', '\\;',
  '\\\\', '&', '\\begin{pmatrix}', '\\end{pmatrix}', '\\begin{array}{cc}', '\\end{array}', '\\begin{', '\\end{', '\\boxed{', '\\boxed ',
  '\\fbox{', '\\{', '\\}', '\\infty', '\\circ', '^\\circ', '\\degree', '\\neq', '\\le', '\\pm', '\\mp', '\\href{', '\\url{', '\\verb|', '\\def',
  '\\newcommand', '\\', '%', '#', '~', 'x', 'y', 'z', 'e', 'E', 'i', 'I', 'sqrt', 'frac', 'a', ' ', '  ', '\n', '\t', '1', '2', '0', '9',
  '.', ',', '-', '+', '*', '**', '/', '(', ')', '[', ']', '=', '<', '>', '!', ':', ';', "'", '"', '٣', '½', '²', 'ⅷ', '𝟙', '\u0000',
  '\u200b', '\uFEFF', '\uD800', 'é', 'ﬁ', '1e308', '1e-320', '0.1', '3.14159', 'dollars', 'cm', 'units', '\\text{ cm}', 'mbox',
];
/**
 * Tokens after which LaTeX no longer sees the closing braces that follow as closing a group: an escaped brace,
 * a lone backslash (it escapes the next '}'), verbatim and URL arguments, environments (unclosed, they swallow
 * the rest), math shifts, comments, definitions.
 */
export const HIDES_CLOSERS = new Set(['\\{', '\\}', '\\', '\\verb|', '\\url{', '\\href{', '\\begin{pmatrix}', '\\begin{array}{cc}', '\\begin{', '\\end{', '\\end{pmatrix}', '\\end{array}', '%', '$', '$$', '\\def', '\\newcommand']);

/**
 * Most tokens in one fragment that open a group or hide closers from LaTeX: each can leave a group LaTeX sees
 * unclosed, and a dozen of those take exponential time (the skipped BUG test in grader-inputs.fuzz.spec.ts);
 * until that is fixed the random fragments stay below it.
 */
export const MAX_FRAGMENT_OPENERS = 6;

const opensGroup = (t: string) => t.includes('{') || t.includes('[') || HIDES_CLOSERS.has(t);

const fragmentOf = (tokens: readonly string[]) =>
  fc.array(fc.constantFrom(...tokens), { maxLength: 60 }).map((picked) => {
    let openers = 0;
    return picked.filter((t) => !opensGroup(t) || ++openers <= MAX_FRAGMENT_OPENERS).join('');
  });

/**
 * The square root of a large exact integer takes time proportional to sqrt(n) * 2^-53 (the second skipped BUG
 * test in grader-inputs.fuzz.spec.ts); until that is fixed, a text that takes a root and can build a large
 * integer (a power, a product, a long digit run) has its roots renamed (`sqrt` -> `sqr`).
 */
export function withoutLargeRoots(s: string): string {
  return /sqrt/.test(s) && /\*|\^|times|cdot|[0-9]{12}/.test(s) ? s.replace(/sqrt/g, 'sqr') : s;
}

/** Random LaTeX from every token. */
export const latexFragment = fragmentOf(LATEX_TOKENS).map(withoutLargeRoots);

/** Random LaTeX without the tokens that hide closers: safe to wrap in deep nesting (see nesting). */
export const plainLatexFragment = fragmentOf(LATEX_TOKENS.filter((t) => !HIDES_CLOSERS.has(t))).map(withoutLargeRoots);

export const bigDigits = fc.integer({ min: 300, max: 4000 }).map((n) => '9'.repeat(n));
export const hugeNumber = fc.oneof(
  fc.constantFrom('1e308', '-1e308', '1.7976931348623157e308', '1e309', '5e-324', '1e-400', '2^1024', '10^{308}', '2**1023', '9^9^9', '0^0', '1/0', '0/0', '-0'),
  fc.constantFrom(`${'9'.repeat(400)}`, `-${'1'.repeat(400)}`, `1${'0'.repeat(400)}.5`, `\\frac{${'7'.repeat(400)}}{${'3'.repeat(400)}}`, `${'1'.repeat(400)}/${'9'.repeat(400)}`),
  bigDigits,
  fc.double().map(String),
  fc.bigInt({ min: -(10n ** 400n), max: 10n ** 400n }).map(String),
);

export type NestingShape = 'balanced' | 'open' | 'close';

/**
 * Braces (or \frac / \sqrt / \boxed / parentheses) nested d deep around a core inside a box. The core hides no
 * closers: one that did would leave all d levels unclosed to LaTeX (the exponential case of the BUG test).
 */
export function nesting(shapes: readonly NestingShape[]): fc.Arbitrary<string> {
  return fc
    .tuple(fc.constantFrom(10, 100, 1000, 10_000, 100_000), fc.constantFrom('{', '\\frac{', '\\sqrt{', '\\boxed{', '('), fc.oneof(hugeNumber, plainLatexFragment), fc.constantFrom(...shapes))
    .map(([d, open, core, shape]) => {
      const close = open === '(' ? ')' : '}';
      const opens = shape === 'close' ? '' : open.repeat(d);
      const closes = shape === 'open' ? '' : close.repeat(d);
      return withoutLargeRoots(`\\boxed{${opens}${core}${closes}}`);
    });
}

/** Any nesting: what a completion may hold (an unclosed box extracts nothing). */
export const nested = nesting(['balanced', 'open', 'close']);

/**
 * Nestings whose groups LaTeX sees closed, for the calls that take an answer directly (isEquivalent, the
 * normalisers, latexToText): an unclosed group is the exponential case of the skipped BUG test.
 */
export const closedNested = nesting(['balanced', 'close']);

/** About a megabyte of one kind of text, with a box somewhere. */
export const megabyte = fc.tuple(fc.constantFrom('x', ' ', '{}', '\\boxed{1}', 'é', '😀', '\\frac{', '}', '\n'), fc.oneof(hugeNumber, latexFragment), fc.nat({ max: 2 })).map(([unit, core, where]) => {
  const filler = unit.repeat(Math.ceil((1 << 20) / unit.length));
  const box = `\\boxed{${core}}`;
  return where === 0 ? box + filler : where === 1 ? filler + box : filler.slice(0, filler.length >> 1) + box + filler.slice(filler.length >> 1);
});

export const unicode = fc.string({ unit: 'binary', maxLength: 200 });
export const completion = fc.oneof(
  { weight: 4, arbitrary: latexFragment },
  { weight: 3, arbitrary: fc.oneof(hugeNumber, latexFragment, unicode).map((a) => `The answer is \\boxed{${a}}.`) },
  { weight: 2, arbitrary: unicode },
  { weight: 1, arbitrary: hugeNumber },
);
export const datasetAnswer = fc.oneof(
  fc.oneof(hugeNumber, fc.integer().map(String), latexFragment, unicode).map((a) => `Some reasoning.\n#### ${a}`),
  fc.tuple(unicode, unicode).map(([a, b]) => `${a}####${b}`),
  unicode,
);

