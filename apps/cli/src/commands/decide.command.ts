// rx decide --spec <spec.json> --treatment a.jsonl --baseline b.jsonl [--all-bounds]
// Files of {"item_id": ..., "correct": true|false} lines, paired by item_id, scored by the spec's paired rule
// (primary criterion) under its pre-registered bound (decision_rule.bound, default hoeffding). Prints
// {n, effect, halfwidth, lower, upper, wins_treatment, wins_baseline, supported, outcome}. --all-bounds prints one
// line per bound rx offers, the pre-registered first, each with its role: "pre-registered" or "exploratory".
import { readFile, stat } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import { decisionRule, type DecisionRule } from '@rx/spec';
import { allBoundRecords, hoeffdingRecord, pairedBound, pairItemFiles, PairedItemsError, type ItemFile } from '@rx/stats';
import { UserError } from '../user-error';
import { argsError, describeFsError, readSpecFile, reportSpecFileError, shown, SpecFileError } from './validate.command';

const USAGE = 'usage: rx decide --spec <spec.json> --treatment a.jsonl --baseline b.jsonl [--all-bounds]';

export async function run(argv: string[]): Promise<number> {
  let values: { spec?: string; treatment?: string; baseline?: string; 'all-bounds'?: boolean };
  try {
    ({ values } = parseArgs({
      args: argv,
      options: { spec: { type: 'string' }, treatment: { type: 'string' }, baseline: { type: 'string' }, 'all-bounds': { type: 'boolean' } },
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
  let nExamples: number;
  try {
    const spec = await readSpecFile(specPath);
    rule = decisionRule(spec);
    nExamples = spec.eval.n_examples;
  } catch (err) {
    if (err instanceof SpecFileError) return reportSpecFileError(err);
    throw err;
  }
  if (await sameFile(treatmentPath, baselinePath)) {
    throw new UserError(`--treatment and --baseline are the same file (${shown(treatmentPath)}): give each arm's own evaluation file`);
  }
  const [treatment, baseline] = await Promise.all([readItemFile(treatmentPath, 'treatment'), readItemFile(baselinePath, 'baseline')]);
  try {
    const paired = pairItemFiles(treatment, baseline);
    // the rule is pre-registered for the spec's evaluation set: a different n is a different experiment
    const n = paired.itemIds.length;
    if (n !== nExamples) throw new UserError(`the files pair ${n} items, but the spec's eval.n_examples is ${nExamples}: decide on the whole pre-registered evaluation set`);
    if (values['all-bounds']) {
      for (const r of allBoundRecords(paired, rule)) {
        const role = r.bound === rule.bound ? 'pre-registered' : 'exploratory';
        const { bound, ...rest } = r;
        process.stdout.write(`${JSON.stringify({ bound, role, ...rest })}\n`);
      }
      return 0;
    }
    process.stdout.write(`${JSON.stringify(hoeffdingRecord(pairedBound(paired, rule)))}\n`);
    return 0;
  } catch (err) {
    if (err instanceof PairedItemsError || err instanceof RangeError) throw new UserError(shown(err.message));
    throw err;
  }
}

/** the same file given twice (the same path, or two names of one file) */
async function sameFile(a: string, b: string): Promise<boolean> {
  try {
    const [x, y] = await Promise.all([stat(a), stat(b)]);
    return x.dev === y.dev && x.ino === y.ino;
  } catch {
    return false;
  }
}

async function readItemFile(path: string, arm: string): Promise<ItemFile> {
  try {
    return { source: path, text: await readFile(path, 'utf8') };
  } catch (err) {
    throw new UserError(`cannot read the ${arm} file ${shown(path)}: ${shown(describeFsError(err))}`);
  }
}
