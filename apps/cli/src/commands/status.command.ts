// rx status <run dir> [--json]: phases done, steps per arm, the gate table, evaluation, decision and verdict,
// read from the run directory in this process (@rx/run-tools runStatus; no controller is started).
import { formatRunStatus, runStatus } from '@rx/run-tools';
import { asUserError, oneRunDir } from './run-dir-args';

export async function run(argv: string[]): Promise<number> {
  const json = argv.includes('--json');
  const dir = oneRunDir(argv.filter((a) => a !== '--json'), 'rx status <run dir> [--json]');
  const s = asUserError(() => runStatus(dir));
  process.stdout.write(`${json ? JSON.stringify(s, null, 2) : formatRunStatus(s)}\n`);
  return 0;
}
