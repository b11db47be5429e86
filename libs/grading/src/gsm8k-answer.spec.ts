import { extractGroundTruth, MissingGroundTruthError } from './gsm8k-answer';

describe('extractGroundTruth (cookbook extract_gsm8k_final_answer)', () => {
  it.each([
    ['Janet sells 9 eggs.\nShe makes $18.\n#### 18', '18'],
    ['...\n#### 1,000', '1000'],
    ['...\n####: 7', '7'],
    ['...\n  #### 3  ', '3'],
    ['...\n#### -2', '-2'],
    ['#### 5\nmore\n#### 6', '6'],
    ['#### 5 #### 6', '5 #### 6'],
    ['a\r\n#### 4\r\n', '4'],
    ['text #### 1,234', '1,234'],
  ])('%j -> %j', (answer, expected) => {
    expect(extractGroundTruth(answer)).toBe(expected);
  });

  it('throws when there is no ####', () => {
    expect(() => extractGroundTruth('The answer is 18.')).toThrow(MissingGroundTruthError);
  });
});
