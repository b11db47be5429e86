// rx export <run dir>: see apps/controller/src/exchange/record-commands.ts (the controller's own command).
// rx export <run dir> --tensorboard [DIR]: TensorBoard event files (tensorboard.command.ts), in this process.
import { parseArgs } from 'node:util';
import { UserError } from '../user-error';
import { runController } from './controller-process';
import { writeTensorBoard } from './tensorboard.command';
import { argsError } from './validate.command';

const TENSORBOARD_USAGE = 'usage: rx export <run dir> --tensorboard [DIR]';

export async function run(argv: string[]): Promise<number> {
  if (!argv.includes('--tensorboard')) return runController('export', argv);
  let positionals: string[];
  try {
    ({ positionals } = parseArgs({ args: argv, options: { tensorboard: { type: 'boolean' } }, strict: true, allowPositionals: true }));
  } catch (err) {
    throw argsError(err, TENSORBOARD_USAGE, argv);
  }
  if (positionals.length < 1 || positionals.length > 2) throw new UserError(`expected a run directory and at most one output directory, got ${positionals.length} arguments; ${TENSORBOARD_USAGE}`);
  return writeTensorBoard(positionals[0], positionals[1]);
}
