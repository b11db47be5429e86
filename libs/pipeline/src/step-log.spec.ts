import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { StepLog } from './step-log';
import { stepRecord } from '@rx/pipeline/testing';

describe('StepLog', () => {
  let dir: string;
  beforeEach(async () => (dir = await mkdtemp(path.join(tmpdir(), 'rx-steplog-'))));
  afterEach(() => rm(dir, { recursive: true, force: true }));

  it('writes one JSON line per step under <dir>/<run>/<arm>/steps.jsonl, each step once', async () => {
    const log = new StepLog(dir);
    expect(await log.append(stepRecord(0))).toBe(true);
    expect(await log.append(stepRecord(1))).toBe(true);
    expect(await log.append(stepRecord(0, -99))).toBe(false);
    const text = await readFile(path.join(dir, 'run-a', 'grpo_gs8', 'steps.jsonl'), 'utf8');
    expect(text.trim().split('\n')).toHaveLength(2);
    expect((await log.read('run-a', 'grpo_gs8')).map((r) => [r.step, r.loss])).toEqual([[0, -1.25], [1, -1.25]]);
  });

  it('appends a new step after reading only the last line, and still refuses a replay of an earlier step', async () => {
    const log = new StepLog(dir);
    for (let step = 0; step < 5; step++) expect(await log.append(stepRecord(step))).toBe(true);
    // a damaged early line is not read when the next step is appended (only the last line is)...
    const file = path.join(dir, 'run-a', 'grpo_gs8', 'steps.jsonl');
    const lines = (await readFile(file, 'utf8')).trim().split('\n');
    await writeFile(file, ['{"damaged', ...lines.slice(1)].join('\n') + '\n');
    expect(await log.lastStep('run-a', 'grpo_gs8')).toBe(4);
    expect(await log.append(stepRecord(5))).toBe(true);
    // ...but a replay of a step at or before the last one reads the whole log
    await writeFile(file, lines.join('\n') + '\n');
    expect(await log.append(stepRecord(2, -99))).toBe(false);
    expect(await log.append(stepRecord(4, -99))).toBe(false);
    expect((await log.read('run-a', 'grpo_gs8')).map((r) => r.step)).toEqual([0, 1, 2, 3, 4]);
  });

  it('finds the last step behind a line longer than one read', async () => {
    const log = new StepLog(dir);
    await log.append(stepRecord(0));
    const long = { ...stepRecord(1), transcripts: [{ rolloutId: '1-0', tokens: Array.from({ length: 60_000 }, (_, i) => i % 50) }] };
    expect(await log.append(long)).toBe(true);
    expect(await log.lastStep('run-a', 'grpo_gs8')).toBe(1);
    expect(await new StepLog(dir).lastStep('nope', 'grpo_gs8')).toBeNull();
  });

  it('reads an absent log as empty', async () => {
    expect(await new StepLog(dir).read('nope', 'grpo_gs8')).toEqual([]);
  });
});
