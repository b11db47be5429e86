// Hostile inputs: each call must finish well within a second (the cookbook's grading timeout) and say no.
import { extractBoxed } from './boxed-answer';
import { isEquivalent, MAX_ANSWER_CHARS } from './math-grade';
import { latexToText, LatexTooLargeError } from './latex-to-text';
import { normalizeExpression } from './answer-normalize';
import { gradeCompletion } from './problem-reward';

function timed<T>(fn: () => T): [T, number] {
  const t0 = process.hrtime.bigint();
  const v = fn();
  return [v, Number(process.hrtime.bigint() - t0) / 1e6];
}

const LIMIT_MS = 1000;

describe('bounded time on hostile inputs', () => {
  it('10k nested braces inside a box', () => {
    const s = '\\boxed{' + '{'.repeat(10_000) + '18' + '}'.repeat(10_000) + '}';
    const [r, ms] = timed(() => gradeCompletion(s, '#### 18', { endedOnStop: true }));
    expect(r.extracted).toBe('{'.repeat(10_000) + '18' + '}'.repeat(10_000));
    expect(r.correct).toBe(true); // _normalize drops leftover braces; the cookbook says True too
    expect(ms).toBeLessThan(LIMIT_MS);
  });
  it('10k nested boxes', () => {
    const s = '\\boxed{'.repeat(10_000) + '18' + '}'.repeat(10_000);
    const [r, ms] = timed(() => extractBoxed(s));
    expect(r?.startsWith('\\boxed{')).toBe(true);
    expect(ms).toBeLessThan(LIMIT_MS);
  });
  it('deep nesting below the length cap makes the LaTeX step give up, not overflow the stack', () => {
    const s = '\\frac{'.repeat(300) + '1' + '}{2}'.repeat(300);
    expect(s.length).toBeLessThan(MAX_ANSWER_CHARS);
    expect(() => latexToText(s)).toThrow();
    const [r, ms] = timed(() => isEquivalent(s, '18'));
    expect(r).toBe(false);
    expect(ms).toBeLessThan(LIMIT_MS);
  });
  it('groups LaTeX sees unclosed (a macro argument cut off by the end) are parsed once, not once per level', () => {
    // '\\}' closes a group for extractBoxed but is a literal brace to LaTeX: 100 arguments run into the end
    const s = `\\boxed{${'\\frac{'.repeat(100)}${'\\}'.repeat(100)}}`;
    const [r, ms] = timed(() => gradeCompletion(s, '#### 1', { endedOnStop: true }));
    expect(r).toMatchObject({ correct: false, formatOk: true });
    expect(ms).toBeLessThan(LIMIT_MS);
    const [text, ms2] = timed(() => latexToText('\\frac{\\frac{1}'));
    expect(text).toBe('%s/%s%s/%s1');
    expect(ms2).toBeLessThan(LIMIT_MS);
  });
  it('LaTeX whose text outgrows the input (nested accents, a padded matrix, nested display math) is graded like a timeout', () => {
    // 40 nested accents would make 2^40 characters; 20000 cells padded to 30000; 200 levels re-indenting 30000 lines
    const inputs = [
      `${'\\hat{'.repeat(40)}1${'}'.repeat(40)}`,
      `\\begin{pmatrix}${'x&'.repeat(20_000)}${'y'.repeat(30_000)}\\end{pmatrix}`,
      `${'\\['.repeat(200)}${'a\n'.repeat(30_000)}${'\\]'.repeat(200)}`,
    ];
    for (const s of inputs) {
      expect(s.length).toBeLessThan(MAX_ANSWER_CHARS);
      const [r, ms] = timed(() => gradeCompletion(`\\boxed{${s}}`, '#### 1', { endedOnStop: true }));
      expect(r).toMatchObject({ correct: false, formatOk: true, extracted: s });
      expect(ms).toBeLessThan(LIMIT_MS);
      expect(() => latexToText(s)).toThrow(LatexTooLargeError);
      expect(isEquivalent(s, s)).toBe(true);
      expect(normalizeExpression(s)).toContain('\\'); // kept unconverted, as when pylatexenc raises
      // but graded not equal even where the unconverted forms would match (`_normalize` drops '$')
      expect(normalizeExpression(`${s}$`)).toBe(normalizeExpression(s));
      expect(isEquivalent(`${s}$`, s)).toBe(false);
    }
    // below those sizes the text is built as before
    expect(latexToText(`${'\\hat{'.repeat(3)}a${'}'.repeat(3)}`)).toBe('\u00e2\u0302\u0302\u0302'); // each level marks every code point
  });
  it('a 1 MB completion with the answer at the end', () => {
    const s = 'x'.repeat(1 << 20) + ' \\boxed{18}';
    const [r, ms] = timed(() => gradeCompletion(s, '#### 18', { endedOnStop: true }));
    expect(r).toEqual({ correct: true, formatOk: true, extracted: '18', reward: 1 });
    expect(ms).toBeLessThan(LIMIT_MS);
  });
  it('an answer over the length cap is graded like a timeout', () => {
    const s = '\\boxed{' + ' '.repeat(MAX_ANSWER_CHARS) + '18}';
    const [r, ms] = timed(() => gradeCompletion(s, '#### 18', { endedOnStop: true }));
    expect(r).toEqual({ correct: false, formatOk: true, extracted: ' '.repeat(MAX_ANSWER_CHARS) + '18', reward: 0 });
    expect(ms).toBeLessThan(LIMIT_MS);
  });
  it('LaTeX-heavy answers just under the cap', () => {
    const [r, ms] = timed(() => isEquivalent('\\text{a}'.repeat(12_000) + '18', '18'));
    expect(r).toBe(false);
    expect(ms).toBeLessThan(LIMIT_MS);
    const [r2, ms2] = timed(() => isEquivalent('\\,'.repeat(49_000) + '18', '18'));
    expect(r2).toBe(true);
    expect(ms2).toBeLessThan(LIMIT_MS);
  });
  it('a 1 MB boxed answer', () => {
    const s = '\\boxed{' + '1'.repeat(1 << 20) + '}';
    const [r, ms] = timed(() => gradeCompletion(s, '#### 18', { endedOnStop: true }));
    expect(r.correct).toBe(false);
    expect(ms).toBeLessThan(LIMIT_MS);
  });
  it('a 1 MB string of braces and backslashes', () => {
    const s = '{\\'.repeat(1 << 19);
    const [r, ms] = timed(() => extractBoxed(s));
    expect(r).toBeNull();
    expect(ms).toBeLessThan(LIMIT_MS);
  });
  it('huge numbers and huge powers', () => {
    const big = '9'.repeat(4000);
    for (const [a, b] of [[big, '18'], ['(2**4000)', '(2**4000)'], ['(1,2**4000)', '(1,2**4001)'], ['9**9**9', '18'], ['1e400', '1e400']]) {
      const [, ms] = timed(() => isEquivalent(a, b));
      expect(ms).toBeLessThan(LIMIT_MS);
    }
    expect(isEquivalent('(1,2**4000)', '(1,2**4001)')).toBe(false);
  });
  it('many thousands separators (the cookbook strips them pass after pass)', () => {
    const s = Array.from({ length: 1000 }, () => '000').join(',');
    const [, ms] = timed(() => isEquivalent('1,' + s, '1' + s.replace(/,/g, '')));
    expect(ms).toBeLessThan(LIMIT_MS);
  });
  it('regex-hostile repetitions', () => {
    for (const s of ['1' + ' '.repeat(4000) + 'a', '-'.repeat(4000), '0'.repeat(2000) + '/' + '0'.repeat(2000), '^1'.repeat(2000), 'degree'.repeat(600)]) {
      const [, ms] = timed(() => isEquivalent(s, s + 'x'));
      expect(ms).toBeLessThan(LIMIT_MS);
    }
  });
  it('unicode: astral characters, combining marks, right-to-left text, lone surrogates', () => {
    for (const s of ['\u{1F600}18', '1\u03018', '\u202e81', '\ud800', '18\udc00', '\\text{\u{1F600}}']) {
      expect(isEquivalent(s, '18')).toBe(false);
      expect(() => normalizeExpression(s)).not.toThrow();
    }
    expect(isEquivalent('\u{1D7CF}\u{1D7D6}', '18')).toBe(true); // mathematical bold digits are decimal digits to Python
    expect(isEquivalent('\\\u{1D400}{18}', '18')).toBe(true); // a macro named by a letter outside ASCII: unknown, dropped
  });
});
