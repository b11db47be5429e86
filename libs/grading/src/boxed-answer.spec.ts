import { extractBoxed } from './boxed-answer';

describe('extractBoxed (cookbook extract_boxed)', () => {
  it.each([
    ['The answer is \\boxed{18}.', '18'],
    ['$\\boxed{18}$', '18'],
    ['\\boxed{\\frac{1}{2}}', '\\frac{1}{2}'],
    ['\\boxed{{18}}', '{18}'],
    ['first \\boxed{17} then \\boxed{18}', '18'],
    ['\\boxed{\\boxed{18}}', '\\boxed{18}'],
    ['\\boxed{18} {', '18'],
    ['\\boxed{}', ''],
    ['\\boxed 18', '18'],
    ['\\boxed  x7 more', 'x7'],
    ['\\boxed 7 and \\boxed 8', '7'],
    ['\\boxed{1,000}', '1,000'],
    ['\\boxed{\\$18.00}', '\\$18.00'],
  ])('%j -> %j', (completion, expected) => {
    expect(extractBoxed(completion)).toBe(expected);
  });

  it.each([
    ['no box at all', 'The answer is 18.'],
    ['an unmatched closing brace anywhere', '\\boxed{18}}'],
    ['an unmatched brace before the box', '} \\boxed{18}'],
    ['an unclosed box', '\\boxed{18'],
    ['a space between \\boxed and its brace', '\\boxed {18}'],
    ['\\fbox, which the cookbook does not read', '\\fbox{18}'],
    ['a bare \\boxed without whitespace after it', '\\boxed18'],
  ])('null for %s', (_why, completion) => {
    expect(extractBoxed(completion)).toBeNull();
  });
});
