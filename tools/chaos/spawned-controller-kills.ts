// The controller under chaos as a user meets it: `rx run` with its own services and its own private Redis
// (REDIS_URL unset, the default), its controller SIGKILLed in the pilot, in training and in the evaluation, and the
// private redis-server SIGKILLed mid-training (its guard starts it again on the same port and append-only file). After
// each controller kill the CLI must say in one line how to resume, no process of the killed attempt may run 5 s
// later (nothing here kills them: their lifeline does), and the run goes on with exactly the command a user types,
// `rx run --resume <dir>`. It must end identical to the clean rx run of controller-resume.ts (same spec, override
// and model): step records, gates, eval files, decision, verdict, each arm's optimizer steps on the backend side.
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { descendants, waitGone } from '@rx/local-stack/testing';
import { PHASES, readRunFileIfExists, RunDir } from '@rx/run-dir';
import type { ExperimentSpec } from '@rx/spec';
import { backendOptimizerSteps } from './backend-steps';
import { firstDifference } from './run-comparison';
import { launch, type ManagedProcess } from './service-process';

export interface SpawnedKill {
  what: 'controller' | 'redis-server';
  /** the phase it landed in */
  phase: string;
  /** processes of the killed attempt still running 5 s after the kill (controller kills) */
  leftAlive: string[];
  /** the CLI's last line after a controller kill */
  cliLine: string | null;
}

export interface SpawnedKillsReport {
  seconds: number;
  kills: SpawnedKill[];
  error: string | null;
  problems: string[];
  differences: string[];
  ok: boolean;
}

/** the first phase of a run directory not completed; null when the run is complete */
function currentPhase(root: string): string | null {
  const state = readRunFileIfExists(new RunDir(root), 'state.json');
  if (!state) return 'setup';
  if (state.status === 'complete') return null;
  return PHASES.find((p) => !state.completed.includes(p)) ?? 'record';
}

function trainingStepsDone(root: string): number {
  const state = readRunFileIfExists(new RunDir(root), 'state.json');
  return Object.values(state?.arms ?? {}).reduce((n, a) => n + a.stepsDone, 0);
}

async function until(what: string, proc: ManagedProcess, done: () => boolean, timeoutMs = 900_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!done()) {
    if (!proc.running()) throw new Error(`rx run ended before ${what}: ${proc.tail(600)}`);
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

export interface SpawnedKillsOptions {
  dir: string;
  specFile: string;
  override: string;
  logsDir: string;
  /** the clean run to compare with, and what to compare (runDirFacts of controller-resume.ts) */
  cleanFacts: Record<string, unknown>;
  factsOf: (root: string) => Record<string, unknown> & { records: Record<string, unknown[]>; finalStatePaths: Record<string, string> };
  spec: ExperimentSpec;
  log: (line: string) => void;
}

export async function runSpawnedKills(o: SpawnedKillsOptions): Promise<SpawnedKillsReport> {
  const report: SpawnedKillsReport = { seconds: 0, kills: [], error: null, problems: [], differences: [], ok: false };
  const t0 = Date.now();
  let n = 0;
  // no REDIS_URL, no service settings: rx run starts its own Redis and services, as for a user
  const rx = (args: string[]) => launch({ name: 'rx-run', entry: 'apps/cli/src/main.ts', args, env: { RX_CONCURRENCY: '16' }, logFile: path.join(o.logsDir, `rx-run-spawned-${++n}.log`), waitReady: false });
  const resume = () => rx(['run', '--resume', o.dir]);
  let proc: ManagedProcess | null = null;
  try {
    proc = await rx(['run', '--spec', o.specFile, '--override', o.override, '--out', o.dir]);
    const killController = async (phase: string): Promise<void> => {
      const p = proc as ManagedProcess;
      const tree = descendants(p.pid);
      const controller = tree.find((d) => d.command.includes(path.join('apps', 'controller', 'src', 'main.ts')));
      if (!controller) throw new Error(`no controller under rx run (pid ${p.pid}) in ${phase}`);
      // where the kill lands: a late one finds the run complete, its exchange record perhaps not yet exported
      const landed = currentPhase(o.dir) ?? 'the end (the run complete, its record being written)';
      process.kill(controller.pid, 'SIGKILL');
      const exit = await p.exited;
      const lines = p.tail(2000).trim().split('\n');
      const cliLine = lines[lines.length - 1] ?? null;
      const left = await waitGone(tree.map((d) => d.pid), 5_000);
      const leftAlive = tree.filter((d) => left.includes(d.pid)).map((d) => `${d.pid} ${d.command.slice(0, 120)}`);
      for (const pid of left) process.kill(pid, 'SIGKILL'); // reported below; never left for the resume to meet
      report.kills.push({ what: 'controller', phase, leftAlive, cliLine });
      o.log(`  controller SIGKILLed in ${phase}${landed === phase ? '' : ` (it landed in ${landed})`}: rx run exited ${exit.code ?? exit.signal}, ${tree.length} processes of the attempt, ${leftAlive.length} alive 5 s later; rx run --resume`);
      if (exit.code !== 137) report.problems.push(`controller killed in ${phase}: rx run exited ${exit.code ?? exit.signal}, expected 137`);
      if (cliLine !== `rx: the controller was killed (SIGKILL); the run directory keeps what is done: continue with rx run --resume ${o.dir}`) {
        report.problems.push(`controller killed in ${phase}: the CLI's last line was ${JSON.stringify(cliLine)}`);
      }
      if (leftAlive.length > 0) report.problems.push(`controller killed in ${phase}: still running 5 s later: ${leftAlive.join('; ')}`);
      proc = await resume();
    };

    await until('the pilot', proc, () => currentPhase(o.dir) === 'pilot');
    await new Promise((r) => setTimeout(r, 2_000));
    await killController('pilot');

    await until('training', proc, () => currentPhase(o.dir) === 'training');
    const before = trainingStepsDone(o.dir);
    const redis = descendants((proc as ManagedProcess).pid).find((d) => /^redis-server /.test(d.command));
    if (!redis) throw new Error('no private redis-server under rx run');
    process.kill(redis.pid, 'SIGKILL');
    report.kills.push({ what: 'redis-server', phase: 'training', leftAlive: [], cliLine: null });
    o.log(`  private redis-server SIGKILLed in training (${before} steps done); its guard starts it again on the same data`);
    await until('a training step after the Redis restart', proc, () => trainingStepsDone(o.dir) > before || currentPhase(o.dir) !== 'training');
    if (currentPhase(o.dir) === 'training') await killController('training');
    else report.problems.push('training ended before the controller could be killed in it');

    await until('the evaluation', proc, () => currentPhase(o.dir) === 'evaluation');
    await new Promise((r) => setTimeout(r, 1_000));
    await killController('evaluation');

    const exit = await (proc as ManagedProcess).exited;
    if (exit.code !== 0) throw new Error(`the resumed rx run exited ${exit.code ?? exit.signal}: ${(proc as ManagedProcess).tail(600)}`);
    report.seconds = (Date.now() - t0) / 1000;
    o.log(`  spawned rx run: complete after ${report.kills.length} kills in ${report.seconds.toFixed(1)} s`);

    const facts = o.factsOf(o.dir);
    for (const key of ['records', 'gates', 'evalSha256', 'decision', 'verdict']) {
      const d = firstDifference(facts[key], o.cleanFacts[key], key);
      if (d) report.differences.push(d);
    }
    for (const arm of o.spec.arms.map((a) => a.name)) {
      const applied = backendOptimizerSteps(facts.finalStatePaths[arm], path.join(o.dir, 'services', 'policy-server'));
      if (applied !== o.spec.steps) report.problems.push(`${arm}: the backend's final state holds ${applied ?? 'no'} optimizer steps, expected ${o.spec.steps}`);
    }
    if (!readFileSync(path.join(o.dir, 'state.json'), 'utf8').includes('"resumed": true')) report.problems.push('state.json records no resumed attempt');
  } catch (err) {
    report.error = (err as Error).message;
    if (proc && (proc as ManagedProcess).running()) await (proc as ManagedProcess).stop(30_000);
  }
  report.ok = report.error === null && report.problems.length === 0 && report.differences.length === 0 && report.kills.filter((k) => k.what === 'controller').length === 3;
  return report;
}

export function formatSpawnedKills(r: SpawnedKillsReport): string {
  const lines = [`controller chaos (rx run with its own services and Redis, SIGKILLs, rx run --resume): ${r.seconds.toFixed(0)} s`];
  for (const k of r.kills) lines.push(`  SIGKILL of the ${k.what} in ${k.phase}${k.what === 'controller' ? `: ${k.leftAlive.length} of its processes alive 5 s later; the CLI said: ${k.cliLine}` : ''}`);
  if (r.error) lines.push(`  failed: ${r.error}`);
  for (const p of r.problems) lines.push(`  ${p}`);
  for (const d of r.differences.slice(0, 8)) lines.push(`  differs from the clean run: ${d}`);
  lines.push(`  identical to the clean run (step records, gates, eval files, decision): ${r.error === null && r.differences.length === 0 ? 'yes' : 'no'}`);
  lines.push(`  spawned controller chaos: ${r.ok ? 'PASS' : 'FAIL'}`);
  return lines.join('\n');
}
