// rx advantages --estimator kernel|group_mean [--bandwidth H] [--window 256] --input rollouts.jsonl
// Input: one rollout a line, {"step":0,"prompt_id":"p1","reward":1,"phi":[4.1,-1.3]}, in sampling order. Steps are
// processed in order; the kernel window is carried across steps. Output: one JSON line per rollout, input order:
// {"baseline":…,"advantage":…,"effective_neighbors":…,"fallback":false}.
import { readFile } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import {
  appendToWindow,
  DEFAULT_WINDOW_SIZE,
  emptyWindow,
  groupMeanAdvantages,
  kernelBaseline,
  type RolloutAdvantage,
  type ScoredRollout,
} from '@rx/estimators';
import { z } from 'zod';
import { UserError } from '../user-error';
import { argsError, shown } from './validate.command';

const USAGE = 'usage: rx advantages --estimator kernel|group_mean [--bandwidth H] [--window 256] --input rollouts.jsonl';
const DEFAULT_BANDWIDTH = 0.5;
/** the most rollouts the kernel window may hold (the spec's is 256; each rollout costs one kernel weight per rollout) */
const MAX_WINDOW = 100_000;

const finite = z.number().finite();
const lineSchema = z.object({
  step: z.number().int().nonnegative(),
  prompt_id: z.union([z.string().min(1), z.number().int()]).transform(String),
  reward: finite,
  phi: z.tuple([finite, finite]).optional(),
});

interface Options {
  estimator: 'kernel' | 'group_mean';
  bandwidth: number;
  window: number;
  input: string;
}

function parseOptions(argv: string[]): Options {
  let values: Record<string, string | boolean | undefined>;
  try {
    ({ values } = parseArgs({
      args: argv,
      options: {
        estimator: { type: 'string' },
        bandwidth: { type: 'string' },
        window: { type: 'string' },
        input: { type: 'string' },
      },
      strict: true,
      allowPositionals: false,
    }));
  } catch (err) {
    throw argsError(err, USAGE, argv);
  }
  const estimator = values.estimator;
  if (estimator !== 'kernel' && estimator !== 'group_mean') {
    throw new UserError(`--estimator must be kernel or group_mean${estimator ? `, got '${shown(String(estimator))}'` : ''}; ${USAGE}`);
  }
  if (typeof values.input !== 'string') throw new UserError(`--input is required; ${USAGE}`);
  const bandwidth = values.bandwidth === undefined ? DEFAULT_BANDWIDTH : Number(values.bandwidth);
  if (!Number.isFinite(bandwidth) || bandwidth <= 0) {
    throw new UserError(`--bandwidth must be a positive number, got '${shown(String(values.bandwidth))}'`);
  }
  const window = values.window === undefined ? DEFAULT_WINDOW_SIZE : Number(values.window);
  if (!Number.isInteger(window) || window < 2 || window > MAX_WINDOW) {
    throw new UserError(`--window must be an integer from 2 to ${MAX_WINDOW}, got '${shown(String(values.window))}'`);
  }
  if (estimator === 'group_mean' && (values.bandwidth !== undefined || values.window !== undefined)) {
    throw new UserError('--bandwidth and --window apply to --estimator kernel only');
  }
  return { estimator, bandwidth, window, input: values.input };
}

interface Step {
  step: number;
  rollouts: ScoredRollout[];
  /** 1-based line number of each rollout, for messages */
  lines: number[];
}

function parseRollouts(text: string, file: string, needPhi: boolean): Step[] {
  const steps: Step[] = [];
  text.split(/\r?\n/).forEach((raw, index) => {
    const lineNo = index + 1;
    if (raw.trim() === '') return;
    let json: unknown;
    try {
      json = JSON.parse(raw);
    } catch {
      throw new UserError(`${file} line ${lineNo}: not valid JSON`);
    }
    const parsed = lineSchema.safeParse(json);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      const where = issue.path.length ? `'${issue.path.join('.')}' ` : '';
      throw new UserError(`${file} line ${lineNo}: ${where}${issue.message.toLowerCase()}`);
    }
    const row = parsed.data;
    if (needPhi && !row.phi) throw new UserError(`${file} line ${lineNo}: 'phi' is required by the kernel estimator`);
    let current = steps[steps.length - 1];
    if (current && row.step < current.step) {
      throw new UserError(`${file} line ${lineNo}: step ${row.step} after step ${current.step}; lines must be in sampling order`);
    }
    if (!current || row.step !== current.step) {
      current = { step: row.step, rollouts: [], lines: [] };
      steps.push(current);
    }
    current.rollouts.push({
      rolloutId: `${row.step}-${current.rollouts.length}`,
      step: row.step,
      promptId: row.prompt_id,
      reward: row.reward,
      phi: row.phi ?? [0, 0],
    });
    current.lines.push(lineNo);
  });
  return steps;
}

function outputLine(a: RolloutAdvantage): string {
  return JSON.stringify({
    baseline: a.baseline,
    advantage: a.advantage,
    effective_neighbors: a.effectiveNeighbors,
    fallback: a.fallback,
  });
}

export async function run(argv: string[]): Promise<number> {
  const opts = parseOptions(argv);
  let text: string;
  try {
    text = await readFile(opts.input, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    throw new UserError(`cannot read --input ${shown(opts.input)}${code ? ` (${code})` : ''}`);
  }
  const steps = parseRollouts(text, shown(opts.input), opts.estimator === 'kernel');
  const out: string[] = [];
  let window = emptyWindow(opts.window);
  for (const step of steps) {
    let advantages: RolloutAdvantage[];
    if (opts.estimator === 'group_mean') {
      advantages = groupMeanAdvantages(step.rollouts);
    } else {
      try {
        advantages = kernelBaseline(step.rollouts, window.rollouts, { bandwidth: opts.bandwidth, windowSize: opts.window });
      } catch (err) {
        if (!(err instanceof RangeError)) throw err;
        throw new UserError(`${shown(opts.input)} step ${step.step} (line ${step.lines[0]}): ${shown(err.message)}`);
      }
      window = appendToWindow(window, step.rollouts);
      // phi near the float64 limit overflows the window mean or the squared distances: no number to print
      const bad = advantages.findIndex((a) => !Number.isFinite(a.advantage) || !Number.isFinite(a.baseline) || !Number.isFinite(a.effectiveNeighbors));
      if (bad >= 0) {
        throw new UserError(`${shown(opts.input)} line ${step.lines[bad]}: the kernel baseline is not a finite number (phi too large: its mean or the squared distances overflow float64); rescale phi`);
      }
    }
    for (const a of advantages) out.push(outputLine(a));
  }
  if (out.length > 0) process.stdout.write(out.join('\n') + '\n');
  return 0;
}
