// rx export <run dir>: writes <run>/exchange/record.json and the files it names (@rx/run-tools
// buildExchangeRecord, in this process); exit 0, 2 when the run lacks a part or its directory is not writable.
// rx export <run dir> --tensorboard [DIR]: TensorBoard event files (tensorboard.command.ts), in this process.
import { existsSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { checkWritableDir } from '@rx/run-dir';
import { buildExchangeRecord } from '@rx/run-tools';
import { UserError } from '../user-error';
import { asUserError, oneRunDir } from './run-dir-args';
import { writeTensorBoard } from './tensorboard.command';
import { argsError } from './validate.command';

const TENSORBOARD_USAGE = 'usage: rx export <run dir> --tensorboard [DIR]';

function exportRecord(argv: string[]): number {
  const dir = oneRunDir(argv, 'rx export <run dir>');
  // the exchange record is written into the run directory: a read-only one is one line before any work
  if (existsSync(dir)) {
    try {
      checkWritableDir(dir);
    } catch (err) {
      throw new UserError(`rx export ${dir}: ${(err as Error).message}; the exchange record is written into the run directory: export a writable copy of it (cp -r)`);
    }
  }
  const { file } = asUserError(() => buildExchangeRecord(dir));
  process.stdout.write(`wrote ${file}\n`);
  return 0;
}

export async function run(argv: string[]): Promise<number> {
  if (!argv.includes('--tensorboard')) return exportRecord(argv);
  let positionals: string[];
  try {
    ({ positionals } = parseArgs({ args: argv, options: { tensorboard: { type: 'boolean' } }, strict: true, allowPositionals: true }));
  } catch (err) {
    throw argsError(err, TENSORBOARD_USAGE, argv);
  }
  if (positionals.length < 1 || positionals.length > 2) throw new UserError(`expected a run directory and at most one output directory, got ${positionals.length} arguments; ${TENSORBOARD_USAGE}`);
  return writeTensorBoard(positionals[0], positionals[1]);
}
