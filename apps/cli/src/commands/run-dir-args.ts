// The argv and error layer of the commands that read a run directory in this process (rx status, rx export,
// rx check-record; the work is @rx/run-tools'): one run directory, and a damaged or missing one as one line.
import { RunStateError } from '@rx/run-dir';
import { ExportError } from '@rx/run-tools';
import { UserError } from '../user-error';

/** the one run directory of a command line, or the usage as a UserError */
export function oneRunDir(argv: readonly string[], usage: string): string {
  if (argv.length !== 1 || argv[0].startsWith('-')) throw new UserError(`usage: ${usage}`);
  return argv[0];
}

/** work on a run directory; what is wrong with the directory (a file missing, damaged, not a run) is a UserError */
export function asUserError<T>(work: () => T): T {
  try {
    return work();
  } catch (err) {
    if (err instanceof ExportError || err instanceof RunStateError) throw new UserError(err.message);
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') throw new UserError((err as Error).message.replace(/^ENOENT: /, ''));
    throw err;
  }
}
