#!/usr/bin/env node
// rx: the command line. Each command lives in ./commands/<name>.command.ts and exports `run(argv)`, which
// returns the exit code. A UserError prints one line (cause and fix) and exits 2; never a stack trace.
import 'reflect-metadata';
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { UserError } from './user-error';

type Command = {
  summary: string;
  /** what `rx <command> --help` prints below the usage line */
  help: string;
  load: () => Promise<{ run(argv: string[]): Promise<number> }>;
};

const commands: Record<string, Command> = {
  validate: {
    summary: 'validate <spec.json>: check an experiment spec',
    help: 'Checks an experiment spec against the schema; each error names its JSON path. Exit 0 valid, 2 invalid.',
    load: () => import('./commands/validate.command'),
  },
  advantages: {
    summary: 'advantages --estimator kernel|group_mean --input rollouts.jsonl',
    help: [
      'Advantages per rollout, one JSON line each, from a JSONL file of rollouts.',
      '  --estimator kernel|group_mean   the estimator (GS1 kernel baseline or GRPO group mean)',
      '  --input FILE                    rollouts.jsonl',
      '  --bandwidth H                   kernel bandwidth (kernel only)',
      '  --window N                      rollout window carried across steps (kernel only)',
    ].join('\n'),
    load: () => import('./commands/advantages.command'),
  },
  decide: {
    summary: 'decide --spec <spec.json> --treatment a.jsonl --baseline b.jsonl [--all-bounds]',
    help: [
      "The paired noninferiority decision from two per-item evaluation files under the spec's pre-registered bound",
      '(decision_rule.bound: hoeffding by default, empirical_bernstein or betting; the spec gives alpha and the margin).',
      '  --all-bounds   one line per bound rx offers, the pre-registered first; the others are labelled exploratory',
    ].join('\n'),
    load: () => import('./commands/decide.command'),
  },
  plan: {
    summary: 'plan <spec.json> [--from-run DIR] [--backend embedded|tinker] [--json]: power and cost before running',
    help: [
      "Before anything is spent: what the spec's decision can conclude and what the run will cost, against its budget.",
      'Per bound (the pre-registered one, the others labelled exploratory): half-width, the smallest observed effect',
      'that concludes, power at true effects 0, +0.01, +0.03 and the margin under a stated discordance rate. Cost: sampled,',
      'prefill and trained tokens per arm and in all, forward_backward / optim_step / sample calls, checkpoints, wall time,',
      'money where the pinned price table (libs/plan/src/price-table.ts) has a sourced entry. Exit 0 within budget, 3 over it.',
      "  --from-run DIR          a run's discordance (its evaluation, else its dev accuracies), completion length and timing",
      '  --backend B             embedded or tinker (default: from the spec\'s base model)',
      '  --json                  one JSON object',
      '  --prompt-tokens N       prompt tokens per item (default: max_seq_len - max_tokens, an upper bound)',
      '  --sampled-tokens N      sampled tokens per completion (default: the run\'s mean, else max_tokens)',
    ].join('\n'),
    load: () => import('./commands/plan.command'),
  },
  grade: {
    summary: 'grade --input completions.jsonl',
    help: 'GSM8K grading and the env reward of each completion, one JSON line each.',
    load: () => import('./commands/grade.command'),
  },
  data: {
    summary: 'data fetch gsm8k [--out DIR] [--from PATH]: put GSM8K in data/gsm8k',
    help: [
      'Downloads GSM8K from its public hub, or copies and verifies a local copy.',
      '  --out DIR      where to write train.jsonl and test.jsonl (default data/gsm8k)',
      '  --from PATH    a local folder to copy from instead of downloading',
      '  --no-verify    skip the sha256 check',
    ].join('\n'),
    load: () => import('./commands/data.command'),
  },
  report: {
    summary: 'report <run dir>: write <run dir>/report.html (charts, gates, decision; opens offline)',
    help: 'Writes a self-contained report.html into the run directory: gates against their bounds, curves, the 2x2 table and the interval.',
    load: () => import('./commands/report.command'),
  },
  run: {
    summary: 'run --spec <spec.json> [--backend embedded|tinker] [--services spawn|external] [--out DIR] [--resume DIR]',
    help: [
      'Runs a whole experiment: preflight, pilot and gates, both arms, evaluation, decision, record.',
      '  --spec FILE                  the experiment spec (specs/embedded.json for the embedded run)',
      '  --out DIR                    the run directory to create',
      '  --resume DIR                 continue an interrupted run',
      '  --backend embedded|tinker    the model backend (default: from the spec)',
      '  --services spawn|external    start the services as child processes (default) or use running ones',
      '  --override FILE              a JSON file of spec overrides',
      '  --port N|off                 the controller\'s /health, /metrics and /queues port',
      'Ctrl-C stops the run; the run directory keeps what is done (continue with --resume).',
    ].join('\n'),
    load: () => import('./commands/run.command'),
  },
  export: {
    summary: "export <run dir>: the run's record in the research exchange's schema (<run dir>/exchange/record.json)",
    help: [
      'Writes exchange/record.json and the files it names (item manifest, scored observations, per-arm restore evidence, the pinned source files), each hash of a file in the run directory.',
      '  --tensorboard [DIR]    instead, TensorBoard event files of the run (as rx tensorboard; default <run dir>/tensorboard)',
    ].join('\n'),
    load: () => import('./commands/export.command'),
  },
  tensorboard: {
    summary: 'tensorboard <run dir> [--out DIR]: TensorBoard event files of the run (also rx export <run dir> --tensorboard [DIR])',
    help: [
      'Writes TensorBoard event files, one folder per arm, per pilot and per pilot arm, under <run dir>/tensorboard:',
      "every numeric key of each arm's metrics.jsonl by step, the dev accuracy by number of updates, each pilot's gates.",
      'Open them with: tensorboard --logdir <run dir>/tensorboard. Read-only on the run; runs again replace the files.',
      '  --out DIR    where to write them (default <run dir>/tensorboard)',
    ].join('\n'),
    load: () => import('./commands/tensorboard.command'),
  },
  'check-record': {
    summary: "check-record <run dir>: re-derive the exchange record's hashes and apply the exchange's validators",
    help: 'Re-reads every file exchange/record.json names, re-derives its hashes and identities, and applies evaluator_validation, decision_validation, restoration_validation, feasibility and correctness_validation: one line each. Exit 0 all pass, 3 one fails, 2 no record.',
    load: () => import('./commands/check-record.command'),
  },
  status: {
    summary: 'status <run dir>: phases, steps, gates, evaluation and decision of a run',
    help: 'Summarises a run directory: phases, steps per arm, gates, evaluation and decision (--json for a machine-readable form).',
    load: () => import('./commands/status.command'),
  },
};

function usage(): string {
  return [
    'usage: rx <command> [options]',
    '',
    ...Object.entries(commands).map(([n, c]) => `  ${n.padEnd(11)} ${c.summary}`),
    '',
    "rx <command> --help (or rx help <command>) for a command's options; rx --version for the version.",
  ].join('\n');
}

function commandHelp(command: Command): string {
  // every summary starts with the command's own usage, up to ': '
  return `usage: rx ${command.summary.split(': ')[0]}\n\n${command.help}`;
}

function version(): string {
  const pkg = JSON.parse(readFileSync(path.resolve(__dirname, '..', '..', '..', 'package.json'), 'utf8')) as { version: string };
  return `rx ${pkg.version}`;
}

const HELP_FLAGS = new Set(['--help', '-h']);

async function main(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (!name) {
    process.stderr.write(usage() + '\n');
    return 2;
  }
  if (name === '--version' || name === '-V' || name === 'version') {
    process.stdout.write(version() + '\n');
    return 0;
  }
  if (HELP_FLAGS.has(name) || name === 'help') {
    const topic = name === 'help' ? rest[0] : undefined;
    if (topic === undefined) {
      process.stdout.write(usage() + '\n');
      return 0;
    }
    const command = commands[topic];
    if (!command) throw new UserError(`unknown command '${topic}'; run 'rx --help' for the list of commands`);
    process.stdout.write(commandHelp(command) + '\n');
    return 0;
  }
  const command = commands[name];
  if (!command) throw new UserError(`unknown command '${name}'; run 'rx --help' for the list of commands`);
  // --help anywhere before a lone `--` asks for the command's help, never runs it
  const beforeDashes = rest.indexOf('--') === -1 ? rest : rest.slice(0, rest.indexOf('--'));
  if (beforeDashes.some((a) => HELP_FLAGS.has(a))) {
    process.stdout.write(commandHelp(command) + '\n');
    return 0;
  }
  return (await command.load()).run(rest);
}

main(process.argv.slice(2)).then(
  (code) => { process.exitCode = code; },
  (err: unknown) => {
    if (err instanceof UserError) {
      process.stderr.write(`rx: ${err.message}\n`);
      process.exitCode = 2;
    } else {
      process.stderr.write(`rx: internal error: ${err instanceof Error ? err.stack ?? err.message : String(err)}\n`);
      process.exitCode = 1;
    }
  },
);
