// rx report <run dir>
// Writes <run dir>/report.html: one self-contained page (chart.js inlined, the data in the page) with the reward
// per step per arm, the gates against their bounds, the advantage and effective-neighbour distributions, the
// paired 2x2 table, the Hoeffding interval against the margin and the verdict. Opens offline.
import { parseArgs } from 'node:util';
import { RunDirError, writeReport } from '@rx/report';
import { UserError } from '../user-error';
import { argsError, shown } from './validate.command';

const USAGE = 'usage: rx report <run dir>';

export async function run(argv: string[]): Promise<number> {
  let positionals: string[];
  try {
    ({ positionals } = parseArgs({ args: argv, options: {}, strict: true, allowPositionals: true }));
  } catch (err) {
    throw argsError(err, USAGE, argv);
  }
  if (positionals.length !== 1) throw new UserError(`expected one run directory, got ${positionals.length}; ${USAGE}`);
  try {
    const report = writeReport(positionals[0]);
    process.stdout.write(`wrote ${report.file} (${report.charts} charts, ${Math.round(report.bytes / 1024)} KiB)\n`);
    for (const note of report.notes) process.stdout.write(`  note: ${note}\n`);
    return 0;
  } catch (err) {
    if (err instanceof RunDirError) throw new UserError(shown(err.message));
    throw err;
  }
}
