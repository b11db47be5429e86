import { extractGroundTruth } from '@rx/grading';
import { ARITH_MAX_CHARS, ARITH_TEST_SIZE, ARITH_TRAIN_SIZE, arithDataset } from './arith';

/** the work lines evaluated independently: each `a op b = c.` holds, chained, and ends on the answer */
function checkWork(answer: string): number {
  const [work, final] = answer.split('\n#### ');
  const steps = work.split(' ');
  let prev: number | null = null;
  for (const s of steps) {
    const m = /^(\d+)([+\-*/])(\d+)=(\d+)\.$/.exec(s);
    if (!m) throw new Error(`bad step ${s}`);
    const [a, b, c] = [Number(m[1]), Number(m[3]), Number(m[4])];
    const value = m[2] === '+' ? a + b : m[2] === '-' ? a - b : m[2] === '*' ? a * b : a / b;
    expect(value).toBe(c);
    if (prev !== null) expect(a).toBe(prev);
    prev = c;
  }
  expect(String(prev)).toBe(final);
  return steps.length;
}

describe('arithDataset', () => {
  const test = arithDataset({ split: 'test', seed: 0 });
  const train = arithDataset({ split: 'train', seed: 0 });

  it('has a test split of exactly 1319 and a train split of at least 2560, with no shared question', () => {
    expect(test).toHaveLength(ARITH_TEST_SIZE);
    expect(ARITH_TEST_SIZE).toBe(1319);
    expect(train).toHaveLength(ARITH_TRAIN_SIZE);
    expect(train.length).toBeGreaterThanOrEqual(2560);
    const testQuestions = new Set(test.map((p) => p.question));
    expect(testQuestions.size).toBe(test.length);
    expect(train.filter((p) => testQuestions.has(p.question))).toHaveLength(0);
    expect(new Set(train.map((p) => p.id)).size).toBe(train.length);
  });

  it('is seeded: the same seed gives the same problems, another seed others', () => {
    expect(arithDataset({ split: 'test', seed: 0 })).toEqual(test);
    const other = arithDataset({ split: 'test', seed: 1 });
    expect(other.map((p) => p.question)).not.toEqual(test.map((p) => p.question));
    expect(() => arithDataset({ split: 'test', seed: -1 })).toThrow('seed');
  });

  it('writes correct integer answers after ####, with 1 to 3 operations of each kind', () => {
    const ops = new Map<number, number>();
    for (const p of test) {
      const n = checkWork(p.answer);
      ops.set(n, (ops.get(n) ?? 0) + 1);
      expect(extractGroundTruth(p.answer)).toMatch(/^\d+$/);
    }
    expect([...ops.keys()].sort()).toEqual([1, 2, 3]);
    for (const k of ['+', '-', '*', '/']) expect(test.some((p) => p.answer.includes(k))).toBe(true);
  });

  it('fits the 128-character context when rendered, with prompt lengths that vary', () => {
    // <bos> + question + ' answer in \boxed{}.' + '\n', then the work, ' \boxed{N}' and <eos>
    const lengths = test.map((p) => 1 + p.question.length + 21);
    for (const p of test) {
      const [work, final] = p.answer.split('\n#### ');
      expect(1 + p.question.length + 21 + work.length + ` \\boxed{${final}}`.length + 1).toBeLessThanOrEqual(ARITH_MAX_CHARS);
    }
    expect(Math.max(...lengths) - Math.min(...lengths)).toBeGreaterThanOrEqual(25);
    expect(new Set(lengths).size).toBeGreaterThan(20);
  });
});
