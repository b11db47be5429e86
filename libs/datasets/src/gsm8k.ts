// GSM8K (openai/gsm8k, `main` config) from a local folder of train.jsonl / test.jsonl, as in ../shared/data/gsm8k/
// and the dataset's public release: one `{"question": …, "answer": …}` object a line, the answer ending in `#### N`.
import { createHash } from 'node:crypto';
import { mkdir, readFile, rename, stat, writeFile } from 'node:fs/promises';
import * as path from 'node:path';
import type { Problem } from './problem';

export type Gsm8kSplit = 'train' | 'test';
export const GSM8K_SPLITS: readonly Gsm8kSplit[] = ['train', 'test'];

/** Sizes of the public release (main config). */
export const GSM8K_SIZES: Readonly<Record<Gsm8kSplit, number>> = { train: 7473, test: 1319 };

/** sha256 of the public release's files (../shared/README.md); `serializeGsm8kJsonl` reproduces them byte for byte. */
export const GSM8K_SHA256: Readonly<Record<Gsm8kSplit, string>> = {
  train: '17f347dc51477c50d4efb83959dbb7c56297aba886e5544ee2aaed3024813465',
  test: '3730d312f6e3440559ace48831e51066acaca737f6eabec99bccb9e4b3c39d14',
};

export interface Gsm8k {
  train: Problem[];
  test: Problem[];
}

/** A missing folder, a bad line, a failed download: the message says which and where. */
export class DatasetError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'DatasetError';
  }
}

// id = gsm8k-<split>-<0-based index in the release's order>; stable under any shuffle
export function gsm8kProblemId(split: Gsm8kSplit, index: number): string {
  return `gsm8k-${split}-${index}`;
}

/** Checks one record (a JSONL line or a hub row) and makes it a Problem; returns the reason when it is not one. */
export function gsm8kProblemFrom(value: unknown, split: Gsm8kSplit, index: number): Problem | string {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return 'not a JSON object';
  const record = value as Record<string, unknown>;
  for (const key of ['question', 'answer'] as const) {
    if (typeof record[key] !== 'string' || (record[key] as string).trim() === '') return `'${key}' must be a non-empty string`;
  }
  const answer = record.answer as string;
  if (!/####\s*\S/.test(answer)) return "'answer' has no '#### <final answer>' line";
  return { id: gsm8kProblemId(split, index), question: record.question as string, answer };
}

// problems = the non-empty lines of `text` in order, each {"question": string, "answer": "…#### N"}
export function parseGsm8kJsonl(text: string, split: Gsm8kSplit, source = `${split}.jsonl`): Problem[] {
  const problems: Problem[] = [];
  const lines = text.split('\n');
  lines.forEach((raw, k) => {
    const line = raw.endsWith('\r') ? raw.slice(0, -1) : raw;
    if (line.trim() === '') {
      if (k === lines.length - 1) return; // the final newline
      throw new DatasetError(`${source} line ${k + 1}: empty line`);
    }
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch {
      throw new DatasetError(`${source} line ${k + 1}: not valid JSON`);
    }
    const problem = gsm8kProblemFrom(value, split, problems.length);
    if (typeof problem === 'string') throw new DatasetError(`${source} line ${k + 1}: ${problem}`);
    problems.push(problem);
  });
  if (problems.length === 0) throw new DatasetError(`${source}: no problems`);
  return problems;
}

async function readSplitFile(dir: string, split: Gsm8kSplit): Promise<string> {
  const file = path.join(dir, `${split}.jsonl`);
  try {
    return await readFile(file, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') {
      const folder = await stat(dir).then(
        (s) => (s.isDirectory() ? 'present' : 'not a folder'),
        () => 'missing',
      );
      if (folder === 'missing') throw new DatasetError(`GSM8K folder ${dir} does not exist (fetch it with 'rx data fetch gsm8k')`);
      if (folder === 'not a folder') throw new DatasetError(`GSM8K path ${dir} is not a folder`);
      throw new DatasetError(`GSM8K folder ${dir} has no ${split}.jsonl`);
    }
    throw new DatasetError(`cannot read ${file}${code ? ` (${code})` : ''}`);
  }
}

/** One split of a local GSM8K folder. */
export async function loadGsm8kSplit(dir: string, split: Gsm8kSplit): Promise<Problem[]> {
  const text = await readSplitFile(dir, split);
  return parseGsm8kJsonl(text, split, path.join(dir, `${split}.jsonl`));
}

/** Both splits of a local GSM8K folder, in the release's order. */
export async function loadGsm8k(dir: string): Promise<Gsm8k> {
  return { train: await loadGsm8kSplit(dir, 'train'), test: await loadGsm8kSplit(dir, 'test') };
}

// Python's json.dumps string with ensure_ascii: \" \\ \n \r \t \b \f, every other char outside ' '..'~' as \uXXXX (UTF-16)
const PY_ESCAPES: Record<string, string> = { '"': '\\"', '\\': '\\\\', '\n': '\\n', '\r': '\\r', '\t': '\\t', '\b': '\\b', '\f': '\\f' };
function pythonJsonString(s: string): string {
  const escaped = s.replace(/[^ -~]|["\\]/g, (ch) => PY_ESCAPES[ch] ?? '\\u' + ch.charCodeAt(0).toString(16).padStart(4, '0'));
  return `"${escaped}"`;
}

// line = json.dumps({"question": q, "answer": a}) + "\n", the release's own format (Python defaults)
export function serializeGsm8kJsonl(problems: readonly Problem[]): string {
  return problems
    .map((p) => `{"question": ${pythonJsonString(p.question)}, "answer": ${pythonJsonString(p.answer)}}\n`)
    .join('');
}

export function sha256Hex(data: string | Uint8Array): string {
  return createHash('sha256').update(data).digest('hex');
}

export interface Gsm8kSplitReport {
  split: Gsm8kSplit;
  count: number;
  sha256: string;
  /** the count and digest are those of the public release */
  matchesRelease: boolean;
}

// report per split: count, sha256 of the file's bytes, matchesRelease = (count, sha256) equal the release's
export async function inspectGsm8kFolder(dir: string): Promise<Gsm8kSplitReport[]> {
  const reports: Gsm8kSplitReport[] = [];
  for (const split of GSM8K_SPLITS) {
    const text = await readSplitFile(dir, split);
    const count = parseGsm8kJsonl(text, split, path.join(dir, `${split}.jsonl`)).length;
    const sha256 = sha256Hex(text);
    reports.push({ split, count, sha256, matchesRelease: count === GSM8K_SIZES[split] && sha256 === GSM8K_SHA256[split] });
  }
  return reports;
}

/** Writes train.jsonl and test.jsonl in the release's format (each through a temporary file, then renamed). */
export async function writeGsm8kFolder(dir: string, data: Gsm8k): Promise<void> {
  await mkdir(dir, { recursive: true });
  for (const split of GSM8K_SPLITS) {
    const file = path.join(dir, `${split}.jsonl`);
    const tmp = `${file}.tmp-${process.pid}`;
    await writeFile(tmp, serializeGsm8kJsonl(data[split]));
    await rename(tmp, file);
  }
}
