// The trainer's step log: one StepRecord per line in <data dir>/<run>/<arm>/steps.jsonl, each step once
// (a replayed step whose line is missing writes it; one already there is left alone).
import { appendFile, mkdir, readFile } from 'node:fs/promises';
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

  /** appends the record unless its step is logged already; true when it wrote */
  async append(record: StepRecord): Promise<boolean> {
    const existing = await this.read(record.runId, record.arm);
    if (existing.some((r) => r.step === record.step)) return false;
    const file = this.file(record.runId, record.arm);
    await mkdir(path.dirname(file), { recursive: true });
    await appendFile(file, JSON.stringify(record) + '\n', 'utf8');
    return true;
  }
}
