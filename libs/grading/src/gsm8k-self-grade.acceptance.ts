// Every GSM8K test answer's own worked solution, its final line rewritten as \boxed{<final>}, must grade correct
// with the full training reward: 1319 of 1319. Reads $RX_SHARED_DIR/data/gsm8k/test.jsonl (default ../shared).
import { readFile } from 'node:fs/promises';
import * as path from 'node:path';
import { extractGroundTruth } from './gsm8k-answer';
import { gradeCompletion } from './problem-reward';

const SHARED = process.env.RX_SHARED_DIR ?? path.resolve(__dirname, '../../../..', 'shared');
const TEST_FILE = path.join(SHARED, 'data', 'gsm8k', 'test.jsonl');

/** The worked solution with its "#### <final>" line replaced by a boxed final answer, as a model would write it. */
function selfCompletion(answer: string): string {
  const cut = answer.lastIndexOf('####');
  const final = answer.slice(cut + 4).trim();
  return `${answer.slice(0, cut).trimEnd()}\nThe answer is \\boxed{${final}}.`;
}

describe('GSM8K test answers graded against themselves', () => {
  let rows: { question: string; answer: string }[];
  beforeAll(async () => {
    rows = (await readFile(TEST_FILE, 'utf8')).split('\n').filter((l) => l.trim()).map((l) => JSON.parse(l));
  });

  it('reads all 1319 test rows', () => {
    expect(rows).toHaveLength(1319);
  });

  it('grades 1319/1319 correct with reward 1', () => {
    const failures: string[] = [];
    for (const [i, row] of rows.entries()) {
      const completion = selfCompletion(row.answer);
      const r = gradeCompletion(completion, row.answer, { endedOnStop: true });
      if (!(r.correct && r.formatOk && r.reward === 1)) failures.push(`row ${i}: ${JSON.stringify(r)}`);
      expect(completion).not.toContain('####');
    }
    expect(failures).toEqual([]);
  });

  it('the boxed final answer is the dataset text, and the reference drops its commas', () => {
    const withCommas = rows.filter((r) => /####.*,/.test(r.answer));
    expect(withCommas.length).toBeGreaterThan(0);
    for (const row of withCommas) {
      const r = gradeCompletion(selfCompletion(row.answer), row.answer, { endedOnStop: true });
      expect(r.extracted).toContain(',');
      expect(extractGroundTruth(row.answer)).not.toContain(',');
      expect(r.correct).toBe(true);
    }
  });

  it('a shifted answer grades wrong on every row', () => {
    let wrong = 0;
    for (const row of rows) {
      const gt = extractGroundTruth(row.answer);
      const shifted = (BigInt(gt) + 1n).toString();
      if (!gradeCompletion(`\\boxed{${shifted}}`, row.answer, { endedOnStop: true }).correct) wrong++;
    }
    expect(wrong).toBe(rows.length);
  });
});
