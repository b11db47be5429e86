// The trainer's step log: one StepRecord per line in <data dir>/<run>/<arm>/steps.jsonl, each step once
// (a replayed step whose line is missing writes it; one already there is left alone). Steps are committed in
// order, so the log is in step order: appending step N reads only the last line unless that line is N or later
// (a replay), and the cost of an append does not grow with the run.
import { appendFile, mkdir, open, readFile } from 'node:fs/promises';
import * as path from 'node:path';
import { stepRecordSchema, type StepRecord } from '@rx/contracts';

export class StepLog {
  constructor(private readonly dataDir: string) {}

  file(runId: string, arm: string): string {
    return path.join(this.dataDir, runId, arm, 'steps.jsonl');
  }

  async read(runId: string, arm: string): Promise<StepRecord[]> {
    let text: string;
    try {
      text = await readFile(this.file(runId, arm), 'utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
      throw err;
    }
    return text
      .split('\n')
      .filter((l) => l.trim() !== '')
      .map((l) => stepRecordSchema.parse(JSON.parse(l)));
  }

  /** the step of the log's last line (null: no log, or an empty one) */
  async lastStep(runId: string, arm: string): Promise<number | null> {
    let handle;
    try {
      handle = await open(this.file(runId, arm), 'r');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw err;
    }
    try {
      const size = (await handle.stat()).size;
      // read back from the end until the chunk holds a whole last line (a record is ~20 kB)
      for (let chunk = 64 * 1024; ; chunk *= 4) {
        const length = Math.min(size, chunk);
        const buffer = Buffer.alloc(length);
        await handle.read(buffer, 0, length, size - length);
        const lines = buffer.toString('utf8').split('\n').filter((l) => l.trim() !== '');
        if (lines.length === 0) return null;
        if (lines.length > 1 || length === size) return stepRecordSchema.shape.step.parse((JSON.parse(lines[lines.length - 1]) as { step?: unknown }).step);
      }
    } finally {
      await handle.close();
    }
  }

  /** appends the record unless its step is logged already; true when it wrote */
  async append(record: StepRecord): Promise<boolean> {
    const last = await this.lastStep(record.runId, record.arm);
    if (last !== null && last >= record.step && (await this.read(record.runId, record.arm)).some((r) => r.step === record.step)) return false;
    const file = this.file(record.runId, record.arm);
    await mkdir(path.dirname(file), { recursive: true });
    await appendFile(file, JSON.stringify(record) + '\n', 'utf8');
    return true;
  }
}
