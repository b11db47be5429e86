import { isZeroExpression } from './numeric-expression';

describe('isZeroExpression (sympy subset)', () => {
  it.each([
    ['(0.5)-(1/2)', true],
    ['(1/10+2/10)-(3/10)', true], // exact rationals
    ['(0.1+0.2)-(0.3)', false], // float64, as sympy Floats
    ['(-4)-(-2**2)', true], // Python precedence
    ['(1/2)-(2**-1)', true],
    ['(2**3**2)-(512)', true], // right associative
    ['(2)(3)-(6)', true], // implicit multiplication
    ['(0)-(03)', true], // "03" is 0 then 3
    ['(3)-(03)', false],
    ['(sqrt(4))-(2)', true],
    ['(18)-(18.0)', true],
    ['(18)-(19)', false],
  ])('%s -> %s', (expr, expected) => {
    expect(isZeroExpression(expr)).toBe(expected);
  });
  it.each(['(x)-(x)', '(1/0)-(1)', '(4**(1/2))-(2)', '(sqrt(2))-(1)', '(2**100000)-(1)', '(1_000)-(1000)', '(1\n2)-(2)', '(('])(
    'out of scope: %j',
    (expr) => {
      expect(isZeroExpression(expr)).toBeUndefined();
    },
  );
});
