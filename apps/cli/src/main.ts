#!/usr/bin/env node
// rx: the command line. Each command lives in ./commands/<name>.command.ts and exports `run(argv)`, which
// returns the exit code. A UserError prints one line (cause and fix) and exits 2; never a stack trace.
import 'reflect-metadata';
import { UserError } from './user-error';

type Command = { summary: string; load: () => Promise<{ run(argv: string[]): Promise<number> }> };

const commands: Record<string, Command> = {
  validate: { summary: 'validate <spec.json>: check an experiment spec', load: () => import('./commands/validate.command') },
  advantages: { summary: 'advantages --estimator kernel|group_mean --input rollouts.jsonl', load: () => import('./commands/advantages.command') },
  decide: { summary: 'decide --spec <spec.json> --treatment a.jsonl --baseline b.jsonl', load: () => import('./commands/decide.command') },
  grade: { summary: 'grade --input completions.jsonl', load: () => import('./commands/grade.command') },
  data: { summary: 'data fetch gsm8k [--out DIR] [--from PATH]: put GSM8K in data/gsm8k', load: () => import('./commands/data.command') },
  report: { summary: 'report <run dir>: write <run dir>/report.html (charts, gates, decision; opens offline)', load: () => import('./commands/report.command') },
  run: { summary: 'run --spec <spec.json> [--backend embedded|tinker] [--services spawn|external] [--out DIR] [--resume DIR]', load: () => import('./commands/run.command') },
  status: { summary: 'status <run dir>: phases, steps, gates, evaluation and decision of a run', load: () => import('./commands/status.command') },
};

function usage(): string {
  return ['usage: rx <command> [options]', '', ...Object.entries(commands).map(([n, c]) => `  ${n.padEnd(11)} ${c.summary}`)].join('\n');
}

async function main(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (!name || name === '--help' || name === '-h' || name === 'help') {
    process.stdout.write(usage() + '\n');
    return name ? 0 : 2;
  }
  const command = commands[name];
  if (!command) throw new UserError(`unknown command '${name}'; run 'rx --help' for the list of commands`);
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
