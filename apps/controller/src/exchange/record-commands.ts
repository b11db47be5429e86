// rx export <run dir> and rx check-record <run dir>, and the step rx run ends with (export, then check).
//   export:       writes <run>/exchange/record.json and the files it names; exit 0, 2 when the run lacks a part
//   check-record: one line per validator; exit 0 when every validator passes, 3 when one fails, 2 a user mistake
// (rx run's last step and rx status use exchange-lines.ts)
import { existsSync } from 'node:fs';
import { checkWritableDir } from '@rx/run-dir';
import { RunUserError } from '../experiment/run-options';
import { checkRunRecord } from './check-run-record';
import { buildExchangeRecord, ExportError } from './exchange-export';

function oneRunDir(argv: string[], usage: string): string {
  if (argv.length !== 1 || argv[0].startsWith('-')) throw new RunUserError(`usage: ${usage}`);
  return argv[0];
}

function asUserError<T>(work: () => T): T {
  try {
    return work();
  } catch (err) {
    if (err instanceof ExportError) throw new RunUserError(err.message);
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') throw new RunUserError(`${(err as Error).message.replace(/^ENOENT: /, '')}`);
    throw err;
  }
}

export function exportCommand(argv: string[]): number {
  const dir = oneRunDir(argv, 'rx export <run dir>');
  // the exchange record is written into the run directory: a read-only one is one line before any work
  if (existsSync(dir)) {
    try {
      checkWritableDir(dir);
    } catch (err) {
      throw new RunUserError(`rx export ${dir}: ${(err as Error).message}; the exchange record is written into the run directory: export a writable copy of it (cp -r)`);
    }
  }
  const { file } = asUserError(() => buildExchangeRecord(dir));
  process.stdout.write(`wrote ${file}\n`);
  return 0;
}

export function checkRecordCommand(argv: string[]): number {
  const dir = oneRunDir(argv, 'rx check-record <run dir>');
  const { check, lines } = asUserError(() => checkRunRecord(dir));
  process.stdout.write(`${lines.join('\n')}\n`);
  return check.ok && check.pass ? 0 : 3;
}
