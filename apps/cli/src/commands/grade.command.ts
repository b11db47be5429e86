// rx grade --input completions.jsonl
// Input: one completion a line, {"completion":"… \\boxed{18}","answer":"…#### 18"} with optional
// "ended_on_stop": bool (default true: the completion ended on the renderer's stop sequence). Output: one JSON
// line per input line, in order: {"correct":…,"extracted":…,"reward":…}, graded as the tinker-cookbook's GSM8K
// MathEnv does (reward = 0.1 * (correct_format - 1) + correct_answer).
import { readFile } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import { gradeCompletion, MissingGroundTruthError } from '@rx/grading';
import { z } from 'zod';
import { UserError } from '../user-error';
import { argsError, shown } from './validate.command';

const USAGE = 'usage: rx grade --input completions.jsonl';

const lineSchema = z.object({
  completion: z.string(),
  answer: z.string(),
  ended_on_stop: z.boolean().default(true),
});

function parseOptions(argv: string[]): { input: string } {
  let values: Record<string, string | boolean | undefined>;
  try {
    ({ values } = parseArgs({ args: argv, options: { input: { type: 'string' } }, strict: true, allowPositionals: false }));
  } catch (err) {
    throw argsError(err, USAGE, argv);
  }
  if (typeof values.input !== 'string' || values.input === '') throw new UserError(`--input is required; ${USAGE}`);
  return { input: values.input };
}

function gradeLine(raw: string, lineNo: number, file: string): string {
  let json: unknown;
  try {
    json = JSON.parse(raw);
  } catch {
    throw new UserError(`${file} line ${lineNo}: not valid JSON`);
  }
  const parsed = lineSchema.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const where = issue.path.length ? `'${issue.path.join('.')}' ` : '';
    throw new UserError(`${file} line ${lineNo}: ${where}${issue.message.toLowerCase()}`);
  }
  const row = parsed.data;
  try {
    const r = gradeCompletion(row.completion, row.answer, { endedOnStop: row.ended_on_stop });
    return JSON.stringify({ correct: r.correct, extracted: r.extracted, reward: r.reward });
  } catch (err) {
    if (err instanceof MissingGroundTruthError) {
      throw new UserError(`${file} line ${lineNo}: 'answer' has no "#### <final answer>" line`);
    }
    throw err;
  }
}

export async function run(argv: string[]): Promise<number> {
  const { input } = parseOptions(argv);
  let text: string;
  try {
    text = await readFile(input, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    throw new UserError(`cannot read --input ${shown(input)}${code ? ` (${code})` : ''}`);
  }
  const out: string[] = [];
  text.split(/\r?\n/).forEach((raw, index) => {
    if (raw.trim() !== '') out.push(gradeLine(raw, index + 1, shown(input)));
  });
  if (out.length > 0) process.stdout.write(out.join('\n') + '\n');
  return 0;
}
