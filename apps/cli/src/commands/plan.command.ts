// rx plan <spec.json> [--from-run DIR] [--backend embedded|tinker] [--json] [--prompt-tokens N] [--sampled-tokens N]
// Before anything is spent: what the spec's decision can conclude under each bound (the pre-registered one and the
// others, exploratory) and what the run will cost (tokens, calls, checkpoints, wall time, money where a sourced
// price exists), against the spec's budget. Runs in this process: no controller, no Redis, nothing written.
// Exit 0 within budget, 3 when the plan exceeds it (one line on stderr), 2 on a user's mistake.
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { buildPlan, DEFAULT_DISCORDANCE, DEFAULT_TIMING, devPoints, formatPlan, upperBoundSources, upperBoundTokens, type Discordance, type TokenAssumptions, type UnitTiming } from '@rx/plan';
import { readRunFileIfExists, readRunLines, RunDir, RunFileError } from '@rx/run-dir';
import { baselineArm, devEvalSettings, loadSpecText, treatmentArm, type ExperimentSpec } from '@rx/spec';
import { pairItemFiles, PairedItemsError } from '@rx/stats';
import { UserError } from '../user-error';
import { argsError, readSpecFile, reportSpecFileError, shown, SpecFileError } from './validate.command';

const USAGE = 'usage: rx plan <spec.json> [--from-run DIR] [--backend embedded|tinker] [--json] [--prompt-tokens N] [--sampled-tokens N]';
const CHAR_MODELS = /^rx-embedded\//;

export async function run(argv: string[]): Promise<number> {
  let values: { 'from-run'?: string; backend?: string; json?: boolean; 'prompt-tokens'?: string; 'sampled-tokens'?: string };
  let positionals: string[];
  try {
    ({ values, positionals } = parseArgs({
      args: argv,
      options: { 'from-run': { type: 'string' }, backend: { type: 'string' }, json: { type: 'boolean' }, 'prompt-tokens': { type: 'string' }, 'sampled-tokens': { type: 'string' } },
      strict: true,
      allowPositionals: true,
    }));
  } catch (err) {
    throw argsError(err, USAGE, argv);
  }
  if (positionals.length !== 1) throw new UserError(`expected one spec file, got ${positionals.length}; ${USAGE}`);
  let spec: ExperimentSpec;
  try {
    spec = await readSpecFile(positionals[0]);
  } catch (err) {
    if (err instanceof SpecFileError) return reportSpecFileError(err);
    throw err;
  }
  const backend = values.backend ?? (CHAR_MODELS.test(spec.base_model) ? 'embedded' : 'tinker');
  if (backend !== 'embedded' && backend !== 'tinker') throw new UserError(`--backend must be embedded or tinker, got ${shown(backend)}; ${USAGE}`);

  const run = values['from-run'] ? fromRun(values['from-run']) : null;
  const bound = upperBoundTokens(spec);
  const boundSource = upperBoundSources(spec);
  const tokens: TokenAssumptions = {
    promptTokens: count(values['prompt-tokens'], '--prompt-tokens') ?? bound.promptTokens,
    sampledTokens: count(values['sampled-tokens'], '--sampled-tokens') ?? run?.sampledTokens ?? bound.sampledTokens,
    source: [
      values['prompt-tokens'] ? 'prompt tokens as given' : boundSource.prompt,
      values['sampled-tokens'] ? 'sampled tokens as given' : run?.sampledTokens !== undefined ? `sampled tokens the mean completion of ${run.dir}'s training steps` : boundSource.sampled,
    ].join('; '),
  };
  const plan = buildPlan(positionals[0], spec, {
    backend,
    discordance: run?.discordance ?? DEFAULT_DISCORDANCE,
    tokens,
    timing: run?.timing ?? DEFAULT_TIMING[backend],
  });
  if (values.json) process.stdout.write(`${JSON.stringify(plan)}\n`);
  else process.stdout.write(`${formatPlan(plan).join('\n')}\n`);
  if (!plan.budget.within) {
    process.stderr.write(`rx: the plan exceeds the spec's budget: ${plan.budget.exceeded.join('; ')}\n`);
    return 3;
  }
  return 0;
}

function count(v: string | undefined, flag: string): number | undefined {
  if (v === undefined) return undefined;
  if (!/^[1-9][0-9]*$/.test(v)) throw new UserError(`${flag} must be a positive integer, got ${shown(v)}; ${USAGE}`);
  return Number(v);
}

interface RunFigures {
  dir: string;
  discordance: Discordance;
  sampledTokens?: number;
  timing?: UnitTiming;
}

/** what a run directory measured: discordance (its eval files, else its dev accuracies), completion length, seconds per unit */
function fromRun(dirPath: string): RunFigures {
  const dir = new RunDir(dirPath);
  let spec: ExperimentSpec;
  try {
    const parsed = loadSpecText(readFileSync(dir.specFile, 'utf8'));
    if (!parsed.ok) throw new UserError(`--from-run ${shown(dirPath)}: its spec.json is invalid (${shown(parsed.errors[0])})`);
    spec = parsed.spec;
  } catch (err) {
    if (err instanceof UserError) throw err;
    throw new UserError(`--from-run ${shown(dirPath)}: no run there (cannot read ${shown(dir.specFile)})`);
  }
  const t = treatmentArm(spec).name;
  const b = baselineArm(spec).name;
  try {
    return { dir: dirPath, discordance: discordanceOf(dir, dirPath, spec, t, b), sampledTokens: sampledTokensOf(dir, [t, b]), timing: timingOf(dir, dirPath, spec) };
  } catch (err) {
    if (err instanceof RunFileError || err instanceof PairedItemsError) throw new UserError(`--from-run ${shown(dirPath)}: ${shown(err.message)}`);
    throw err;
  }
}

// discordance = #{items exactly one arm gets right} / n from the arms' eval files; else from the dev accuracies p_t, p_b
// at the final weights assuming independent errors: p_t (1 - p_b) + p_b (1 - p_t) (an overestimate when the arms agree more)
function discordanceOf(dir: RunDir, dirPath: string, spec: ExperimentSpec, t: string, b: string): Discordance {
  if (dir.exists(dir.evalFile(t)) && dir.exists(dir.evalFile(b))) {
    const paired = pairItemFiles({ source: dir.evalFile(t), text: readFileSync(dir.evalFile(t), 'utf8') }, { source: dir.evalFile(b), text: readFileSync(dir.evalFile(b), 'utf8') });
    const n = paired.itemIds.length;
    const only = paired.treatment.filter((x, i) => x !== paired.baseline[i]).length;
    return { rate: only / n, source: `from ${dirPath}'s evaluation: ${only} of ${n} items right under one arm only` };
  }
  const dev = (arm: string) => readRunFileIfExists(dir, '<arm>/training.json', dir.trainingFile(arm))?.dev_accuracy?.at(-1);
  const [dt, db] = [dev(t), dev(b)];
  if (dt && db) {
    const rate = dt.accuracy * (1 - db.accuracy) + db.accuracy * (1 - dt.accuracy);
    return { rate, source: `from ${dirPath}'s dev accuracies ${dt.accuracy.toFixed(3)} and ${db.accuracy.toFixed(3)} (${dt.n} items), assuming independent errors (an upper estimate)` };
  }
  throw new UserError(`--from-run ${shown(dirPath)}: the run has neither both arms' evaluations nor their dev accuracies to estimate the discordance from (${spec.title ? 'is it past training?' : ''})`.replace(' ()', ''));
}

// mean of env/all/ac_tokens_per_turn over both arms' training steps, rounded up
function sampledTokensOf(dir: RunDir, arms: string[]): number | undefined {
  const values = arms.flatMap((arm) => (dir.exists(dir.stepMetricsFile(arm)) ? readRunLines(dir, '<arm>/metrics.jsonl', dir.stepMetricsFile(arm)) : []).map((l) => l['env/all/ac_tokens_per_turn']));
  return values.length > 0 ? Math.ceil(values.reduce((s, x) => s + x, 0) / values.length) : undefined;
}

// step = (training wall - dev points x D x item) / steps; item = evaluation wall / (3 n); fixed = setup + config + init + preflight
function timingOf(dir: RunDir, dirPath: string, spec: ExperimentSpec): UnitTiming | undefined {
  const state = readRunFileIfExists(dir, 'state.json');
  const wall = state?.wallSeconds;
  if (!wall || wall.training === undefined || wall.evaluation === undefined) return undefined;
  const item = wall.evaluation / (3 * spec.eval.n_examples);
  const dev = devEvalSettings(spec);
  const stepSeconds = Math.max(0, (wall.training - devPoints(spec.steps, dev.every) * dev.items * item) / spec.steps);
  const fixedSeconds = (wall.setup ?? 0) + (wall.effective_config ?? 0) + (wall.shared_init ?? 0) + (wall.preflight ?? 0);
  return { stepSeconds, evalItemSeconds: item, fixedSeconds, source: `${dirPath}'s state.json (wall seconds per phase)` };
}
