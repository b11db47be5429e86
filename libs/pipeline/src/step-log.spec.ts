import { mkdtemp, readFile, rm } from 'node:fs/promises';
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

  it('reads an absent log as empty', async () => {
    expect(await new StepLog(dir).read('nope', 'grpo_gs8')).toEqual([]);
  });
});
