// rx decide --spec <spec.json> --treatment a.jsonl --baseline b.jsonl
// Files of {"item_id": ..., "correct": true|false} lines, paired by item_id, scored by the spec's paired Hoeffding
// rule (primary criterion). Prints {n, effect, halfwidth, lower, upper, wins_treatment, wins_baseline, supported, outcome}.
import { readFile } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import { decisionRule, type DecisionRule } from '@rx/spec';
import { decidePairedItems, hoeffdingRecord, PairedItemsError, type ItemFile } from '@rx/stats';
import { UserError } from '../user-error';
import { argsError, describeFsError, readSpecFile, reportSpecFileError, shown, SpecFileError } from './validate.command';

const USAGE = 'usage: rx decide --spec <spec.json> --treatment a.jsonl --baseline b.jsonl';

export async function run(argv: string[]): Promise<number> {
  let values: { spec?: string; treatment?: string; baseline?: string };
  try {
    ({ values } = parseArgs({
      args: argv,
      options: { spec: { type: 'string' }, treatment: { type: 'string' }, baseline: { type: 'string' } },
      strict: true,
      allowPositionals: false,
    }));
  } catch (err) {
    throw argsError(err, USAGE, argv);
  }
  const required = (flag: 'spec' | 'treatment' | 'baseline'): string => {
    const v = values[flag];
    if (v === undefined || v === '') throw new UserError(`--${flag} is required; ${USAGE}`);
    return v;
  };
  const [specPath, treatmentPath, baselinePath] = [required('spec'), required('treatment'), required('baseline')];
  let rule: DecisionRule;
  try {
    rule = decisionRule(await readSpecFile(specPath));
  } catch (err) {
    if (err instanceof SpecFileError) return reportSpecFileError(err);
    throw err;
  }
  const [treatment, baseline] = await Promise.all([readItemFile(treatmentPath, 'treatment'), readItemFile(baselinePath, 'baseline')]);
  try {
    const result = decidePairedItems(treatment, baseline, rule);
    process.stdout.write(`${JSON.stringify(hoeffdingRecord(result))}\n`);
    return 0;
  } catch (err) {
    if (err instanceof PairedItemsError || err instanceof RangeError) throw new UserError(shown(err.message));
    throw err;
  }
}

async function readItemFile(path: string, arm: string): Promise<ItemFile> {
  try {
    return { source: path, text: await readFile(path, 'utf8') };
  } catch (err) {
    throw new UserError(`cannot read the ${arm} file ${shown(path)}: ${shown(describeFsError(err))}`);
  }
}
