import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import {
  DatasetError,
  inspectGsm8kFolder,
  loadGsm8k,
  loadGsm8kSplit,
  parseGsm8kJsonl,
  serializeGsm8kJsonl,
  sha256Hex,
  writeGsm8kFolder,
} from './gsm8k';
import { TINY_GSM8K } from './gsm8k.fixture';
import { takeTrainPrompts } from './seeded-shuffle';

// the fixture as the release writes it: JSON.stringify differs from Python only in spacing and non-ASCII here
const jsonl = (rows: Array<{ question: string; answer: string }>): string =>
  rows.map((r) => JSON.stringify({ question: r.question, answer: r.answer })).join('\n') + '\n';

describe('GSM8K from a local folder', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'rx-gsm8k-'));
    await writeFile(path.join(dir, 'train.jsonl'), jsonl(TINY_GSM8K.train));
    await writeFile(path.join(dir, 'test.jsonl'), jsonl(TINY_GSM8K.test));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('loads both splits in file order, ids by split and index, answers keeping the #### line', async () => {
    const data = await loadGsm8k(dir);
    expect(data.train).toHaveLength(7);
    expect(data.test).toHaveLength(3);
    expect(data.train[0]).toEqual({ id: 'gsm8k-train-0', question: TINY_GSM8K.train[0].question, answer: TINY_GSM8K.train[0].answer });
    expect(data.test[2].id).toBe('gsm8k-test-2');
    expect(data.test[2].answer.endsWith('\n#### 9')).toBe(true);
    expect(data.train[1].question).toContain('café');
  });

  it('takes train prompts in the seed-0 order of HF Dataset.shuffle', async () => {
    const train = await loadGsm8kSplit(dir, 'train');
    // numpy: default_rng(0).permutation(7) = [2 4 3 6 5 0 1]  (checked against numpy in seeded-shuffle.spec.ts)
    expect(takeTrainPrompts(train, 3).map((p) => p.id)).toEqual(['gsm8k-train-2', 'gsm8k-train-4', 'gsm8k-train-3']);
  });

  it('names the missing folder, the missing file and the bad line', async () => {
    await expect(loadGsm8k(path.join(dir, 'nope'))).rejects.toThrow(/GSM8K folder .*nope does not exist \(fetch it with 'rx data fetch gsm8k'\)/);
    const half = path.join(dir, 'half');
    await mkdir(half);
    await writeFile(path.join(half, 'train.jsonl'), jsonl(TINY_GSM8K.train));
    await expect(loadGsm8k(half)).rejects.toThrow(/GSM8K folder .*half has no test\.jsonl/);
    await expect(loadGsm8k(path.join(dir, 'train.jsonl'))).rejects.toThrow(/is not a folder/);
    await expect(loadGsm8k(half)).rejects.toBeInstanceOf(DatasetError);

    const good = JSON.stringify(TINY_GSM8K.train[0]);
    expect(() => parseGsm8kJsonl(`${good}\n{"question": "x"\n`, 'train')).toThrow(/^train\.jsonl line 2: not valid JSON$/);
    expect(() => parseGsm8kJsonl(`${good}\n${good}\n{"question": "q", "answer": 3}\n`, 'train')).toThrow(/line 3: 'answer' must be a non-empty string/);
    expect(() => parseGsm8kJsonl(`{"question": "q", "answer": "no final line"}\n`, 'test')).toThrow(/line 1: 'answer' has no '#### <final answer>' line/);
    expect(() => parseGsm8kJsonl(`${good}\n\n${good}\n`, 'test')).toThrow(/line 2: empty line/);
    expect(() => parseGsm8kJsonl('[1]\n', 'test')).toThrow(/line 1: not a JSON object/);
    expect(() => parseGsm8kJsonl('', 'test')).toThrow(/no problems/);
    expect(parseGsm8kJsonl(`${good}\r\n${good}`, 'test')).toHaveLength(2);
  });

  it('serializes lines exactly as Python json.dumps does (the release format)', () => {
    // python3 -c 'import json; print(json.dumps({"question": "a\"b\\c\n\t\u00e9\U0001F600\x01\x7f~ ", "answer": "x\r\x08\x0c\n#### 5"}))'
    const python = String.raw`{"question": "a\"b\\c\n\t\u00e9\ud83d\ude00\u0001\u007f~ ", "answer": "x\r\b\f\n#### 5"}` + '\n';
    const problem = { id: 'x', question: 'a"b\\c\n\té\u{1F600}\u0001\u007f~ ', answer: 'x\r\b\f\n#### 5' };
    expect(serializeGsm8kJsonl([problem])).toBe(python);
    expect(parseGsm8kJsonl(python, 'test')[0]).toEqual({ ...problem, id: 'gsm8k-test-0' });
  });

  it('writes a folder that loads back the same problems, and reports counts and digests', async () => {
    const data = await loadGsm8k(dir);
    const out = path.join(dir, 'written', 'gsm8k');
    await writeGsm8kFolder(out, data);
    expect(await loadGsm8k(out)).toEqual(data);
    const text = await readFile(path.join(out, 'test.jsonl'), 'utf8');
    expect(text).toBe(serializeGsm8kJsonl(data.test));
    const report = await inspectGsm8kFolder(out);
    expect(report).toEqual([
      { split: 'train', count: 7, sha256: sha256Hex(serializeGsm8kJsonl(data.train)), matchesRelease: false },
      { split: 'test', count: 3, sha256: sha256Hex(text), matchesRelease: false },
    ]);
  });
});
