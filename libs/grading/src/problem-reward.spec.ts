import { gradeCompletion } from './problem-reward';

const ANSWER = 'She makes 9 * 2 = $<<9*2=18>>18 every day.\n#### 18';

describe('gradeCompletion: format_coef * (correct_format - 1) + correct_answer', () => {
  it('correct, well formed: 1', () => {
    expect(gradeCompletion('So she makes \\boxed{18} dollars.', ANSWER, { endedOnStop: true })).toEqual({
      correct: true, formatOk: true, extracted: '18', reward: 1,
    });
  });
  it('wrong, well formed: 0', () => {
    expect(gradeCompletion('\\boxed{17}', ANSWER, { endedOnStop: true })).toEqual({
      correct: false, formatOk: true, extracted: '17', reward: 0,
    });
  });
  it('correct but cut off before the stop sequence: 0.9', () => {
    const r = gradeCompletion('\\boxed{18}', ANSWER, { endedOnStop: false });
    expect(r).toEqual({ correct: true, formatOk: false, extracted: '18', reward: 0.1 * (0 - 1) + 1 });
    expect(r.reward).toBeCloseTo(0.9, 15);
  });
  it('no box: -0.1', () => {
    expect(gradeCompletion('The answer is 18.', ANSWER, { endedOnStop: true })).toEqual({
      correct: false, formatOk: false, extracted: null, reward: -0.1,
    });
  });
  it('unmatched brace fails format and answer even with a right box', () => {
    expect(gradeCompletion('\\boxed{18} }', ANSWER, { endedOnStop: true })).toEqual({
      correct: false, formatOk: false, extracted: null, reward: -0.1,
    });
  });
  it('takes the last box', () => {
    expect(gradeCompletion('\\boxed{18} or rather \\boxed{19}', ANSWER, { endedOnStop: true }).correct).toBe(false);
    expect(gradeCompletion('\\boxed{19} or rather \\boxed{18}', ANSWER, { endedOnStop: true }).correct).toBe(true);
  });
  it('honours another format coefficient', () => {
    expect(gradeCompletion('no box', ANSWER, { endedOnStop: true, formatCoef: 0.25 }).reward).toBe(-0.25);
    expect(gradeCompletion('\\boxed{18}', ANSWER, { endedOnStop: true, formatCoef: 0 }).reward).toBe(1);
  });
  it('reads the reference with commas removed', () => {
    expect(gradeCompletion('\\boxed{1000}', '...\n#### 1,000', { endedOnStop: true }).correct).toBe(true);
    expect(gradeCompletion('\\boxed{1,000}', '...\n#### 1,000', { endedOnStop: true }).correct).toBe(true);
  });
});
