// rx tensorboard <run dir> [--out DIR] (also rx export <run dir> --tensorboard [DIR]): the run's scalars as TensorBoard
// event files (@rx/tensorboard), read-only on the run directory and in this process: no controller is started.
import { parseArgs } from 'node:util';
import { DEFAULT_TENSORBOARD_DIR, exportTensorBoard, TensorBoardExportError } from '@rx/tensorboard';
import { RunFileError } from '@rx/run-dir';
import { UserError } from '../user-error';
import { argsError, shown } from './validate.command';

const USAGE = 'usage: rx tensorboard <run dir> [--out DIR]';

export async function run(argv: string[]): Promise<number> {
  let positionals: string[];
  let out: string | undefined;
  try {
    const parsed = parseArgs({ args: argv, options: { out: { type: 'string' } }, strict: true, allowPositionals: true });
    positionals = parsed.positionals;
    out = parsed.values.out;
  } catch (err) {
    throw argsError(err, USAGE, argv);
  }
  if (positionals.length !== 1) throw new UserError(`expected one run directory, got ${positionals.length}; ${USAGE}`);
  return writeTensorBoard(positionals[0], out);
}

/** the export itself, for rx tensorboard and rx export --tensorboard */
export function writeTensorBoard(runDir: string, out: string | undefined): number {
  let result;
  try {
    result = exportTensorBoard(runDir, out);
  } catch (err) {
    if (err instanceof TensorBoardExportError || err instanceof RunFileError) throw new UserError(shown(err.message));
    throw err;
  }
  process.stdout.write(`wrote ${result.out} (${result.runs.length} TensorBoard runs)\n`);
  for (const r of result.runs) process.stdout.write(`  ${r.name}: ${r.tags} scalars over ${r.steps} steps\n`);
  for (const note of result.notes) process.stdout.write(`  note: ${shown(note)}\n`);
  process.stdout.write(`open it with: tensorboard --logdir ${result.out}\n`);
  return 0;
}

export { DEFAULT_TENSORBOARD_DIR };
