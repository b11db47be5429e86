import { isEquivalent } from './math-grade';

// [boxed content, ground truth, what the cookbook's grade_answer says, why]
const CASES: ReadonlyArray<readonly [string, string, boolean, string]> = [
  ['18', '18', true, 'identical'],
  ['18.0', '18', true, 'integer-valued decimal'],
  ['18.00', '18', true, 'integer-valued decimal, two places'],
  ['\\$18', '18', true, 'escaped dollar (mathd strips \\$)'],
  ['\\$18.00', '18', true, 'escaped dollar and cents (_normalize)'],
  ['$18', '18', true, 'bare dollar (_normalize drops $)'],
  ['18 dollars', '18', false, '"dollars" is not in the unit list'],
  ['18 \\text{ dollars}', '18', true, '\\text{ <space> starts units (mathd _remove_right_units)'],
  ['18\\text{ dollars}', '18', true, 'same without the space before'],
  ['18 \\text{dollars}', '18', false, 'no space inside \\text{: the word stays'],
  ['\\text{18}', '18', true, 'enclosing \\text{}'],
  ['\\textbf{18}', '18', true, 'pylatexenc renders \\textbf as its argument'],
  ['\\mathbf{18}', '18', true, 'bold style touches letters only'],
  ['\\mathrm{18}', '18', true, '\\mathrm renders as its argument'],
  ['1,000', '1000', true, 'thousands separator'],
  ['1{,}000', '1000', true, 'LaTeX-braced separator'],
  ['1\\,000', '1000', false, 'thin space becomes a space, then a mixed number 1+000'],
  ['1 000', '1000', true, 'mathd removes spaces'],
  ['1,000,000', '1000000', true, 'two separators: two passes'],
  ['1,000,000,000', '1000000000', false, 'three separators: the cookbook strips only some of them'],
  ['\\frac{1}{2}', '0.5', true, 'mathd maps 0.5 to \\frac{1}{2}'],
  ['\\dfrac{1}{2}', '0.5', true, 'dfrac is frac'],
  ['1/2', '0.5', true, 'a/b becomes \\frac{a}{b}'],
  ['0.50', '0.5', true, 'numeric comparison of two non-integers'],
  ['.5', '0.5', true, 'leading dot gets a zero'],
  ['\\frac{36}{2}', '18', false, 'an integer reference needs an integer-looking answer'],
  ['36/2', '18', false, 'same as a slash'],
  ['50\\%', '50', true, 'percent sign dropped'],
  ['50%', '50', true, 'bare percent dropped'],
  ['0.5', '50', false, 'a percent is not rescaled'],
  ['-5', '-5', true, 'negative'],
  ['- 5', '-5', true, 'space after the minus sign'],
  ['\u22125', '-5', false, 'Unicode minus is not a minus'],
  ['5', '-5', false, 'sign matters'],
  ['-0', '0', true, 'negative zero'],
  ['18.', '18', true, 'trailing dot'],
  ['18,', '18', false, 'trailing comma'],
  ['(18)', '18', true, 'a one-element tuple compared numerically'],
  ['[18]', '18', true, 'brackets too'],
  ['\\{18\\}', '18', true, 'escaped braces'],
  ['{18}', '18', true, 'plain braces'],
  ['18^\\circ', '18', true, 'degrees'],
  ['18^{\\circ}', '18', true, 'degrees in braces'],
  ['18 days', '18', true, 'a listed unit'],
  ['18 hours', '18', true, 'a listed unit, plural'],
  ['18 eggs', '18', false, 'an unlisted unit'],
  ['x = 18', '18', true, 'short left-hand side dropped (mathd)'],
  ['x=18', '18', true, 'same without spaces'],
  ['total = 18', '18', false, 'long left-hand side kept'],
  ['\\approx 18', '18', false, 'approximately sign stays'],
  ['18.00000001', '18', true, 'within 1e-7 of an integer'],
  ['17.99999999', '18', true, 'within 1e-7 of an integer, below'],
  ['17.9', '18', false, 'not within 1e-7'],
  ['1e1', '10', true, 'exponent notation is a float'],
  ['\u0661\u0668', '18', true, "Arabic-Indic digits: Python's float() reads them"],
  ['\\left(18\\right)', '18', true, '\\left( \\right) removed'],
  ['\\boxed{18}', '18', true, 'a box inside the box'],
  ['18\\!', '18', true, 'negative thin space removed'],
  ['2 million', '2000000', false, 'million becomes *10^6, not an integer string'],
  ['3\\frac{1}{2}', '3.5', true, 'mixed number in LaTeX'],
  ['3 1/2', '3.5', true, 'mixed number in text'],
  ['\\frac{7}{2}', '3.5', true, 'fraction against a decimal'],
  ['7/2', '3.5', true, 'slash fraction against a decimal'],
  ['3.50', '3.5', true, 'trailing zero'],
  ['\\frac{14}{4}', '3.5', true, 'an unreduced fraction still equals a decimal'],
  ['\\sqrt{4}', '2', false, 'integer reference, non-integer-looking answer'],
  ['2^3', '8', false, 'integer reference, expression answer'],
  ['2\\times 9', '18', false, 'integer reference, product answer'],
  ['123456789012345678900', '123456789012345678901', true, 'both round to the same float64'],
  ['19', '18', false, 'wrong'],
  ['', '18', false, 'empty box'],
  [' 18 ', '18', true, 'surrounding spaces'],
  ['\\text{ 18}', '18', true, 'units-removal leaves nothing before, mathd keeps the rest'],
  ['18\\%', '18', true, 'escaped percent'],
  ['18 or 19', '18', false, 'two answers'],
  ['(1, 2)', '(1,2)', true, 'tuples element by element'],
  ['(1,2.0)', '(1,2)', true, 'tuple elements compared numerically'],
  ['\\frac{1}{3}', '0.333', false, 'a rounded decimal is not the fraction'],
];

describe('isEquivalent (cookbook grade_answer)', () => {
  it('has at least 60 hand-written cases', () => {
    expect(CASES.length).toBeGreaterThanOrEqual(60);
  });
  it.each(CASES)('%j vs %j -> %s (%s)', (given, gt, expected) => {
    expect(isEquivalent(given, gt)).toBe(expected);
  });
  it('is symmetric on plain integer answers', () => {
    for (const [a, b] of [['18', '18.0'], ['1,000', '1000'], ['7', '8']] as const) {
      expect(isEquivalent(a, b)).toBe(isEquivalent(b, a));
    }
  });
});
