// rx check-record <run dir>: exchange/record.json read back, every file it names re-read and re-hashed, and the
// exchange's validators applied, one line each (@rx/run-tools checkRunRecord, in this process).
// Exit 0 when every validator passes, 3 when one fails, 2 a user mistake (no record, a damaged run directory).
import { checkRunRecord } from '@rx/run-tools';
import { asUserError, oneRunDir } from './run-dir-args';

export async function run(argv: string[]): Promise<number> {
  const dir = oneRunDir(argv, 'rx check-record <run dir>');
  const { check, lines } = asUserError(() => checkRunRecord(dir));
  process.stdout.write(`${lines.join('\n')}\n`);
  return check.ok && check.pass ? 0 : 3;
}
