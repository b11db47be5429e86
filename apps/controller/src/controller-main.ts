// The controller (its entry point is main.ts; a test's own is testing/hash-chain.main.ts):
//   main.ts run <flags>    rx run: a whole experiment (see experiment/run-experiment.ts); exit 0 complete,
//                          4 complete but its exchange record fails a validator (or could not be written),
//                          3 stopped by a pre-registered check, 5 stopped by its budget (state kept: raise it with
//                          --resume DIR --override raise-budget.json), 1 failed, 130 interrupted, 2 a user mistake
//   main.ts                service mode (RX_ROLE=controller): /health, /metrics, /queues on PORT (3100); with
//                          RX_SPEC set it runs that spec over the external services into RX_DATA_DIR/runs/RX_RUN_NAME
//                          (resuming the run there if one exists), then exits
import 'reflect-metadata';
import * as path from 'node:path';
import { TinkerBackend } from '@rx/backend';
import { createRxMetrics } from '@rx/metrics';
import { parseRunArgs } from './cli/run-args';
import { ControllerConfigError, DEFAULT_REDIS_URL, parseControllerConfig, type ControllerConfig } from './config';
import { BUDGET_STOP } from './experiment/budget-guard';
import { runExperiment } from './experiment/run-experiment';
import { RunUserError, type RunOptions, type RunOutcome } from './composition/run-options';
import { controllerHttpHost, startControllerHttp } from './http/controller-http';
import { pingRedis } from './infra/redis-locator';
import { killAllChildren } from '@rx/local-stack';
import { progressFor } from './progress/progress.reporter';
import { RunStateError } from '@rx/run-dir';

const EXIT = { complete: 0, stopped: 3, failed: 1, interrupted: 130, running: 1 } as const;
/** a complete run whose own exchange record fails a validator (rx check-record would exit 3 on it) */
const EXIT_RECORD_FAILS = 4;
/** a run its budget stopped before the next unit would pass it (budget-guard.ts) */
const EXIT_BUDGET = 5;

const SAME_INTERRUPT_MS = 1000;

function interruptSignal(): AbortSignal {
  const abort = new AbortController();
  let firstAt = 0;
  const on = (sig: NodeJS.Signals) => {
    // a Ctrl-C reaches the controller from the terminal and again from the rx CLI that passes it on: signals within
    // SAME_INTERRUPT_MS of the first are that one interrupt; a later one forces
    if (firstAt && Date.now() - firstAt < SAME_INTERRUPT_MS) return;
    if (!firstAt) {
      firstAt = Date.now();
      process.stderr.write(`\ncontroller: ${sig}: stopping the run (the services are stopped, the run directory keeps what is done; again to force)\n`);
      abort.abort(new Error(`interrupted by ${sig}`));
    } else {
      killAllChildren();
      process.exit(130);
    }
  };
  process.on('SIGINT', on);
  process.on('SIGTERM', on);
  process.on('exit', killAllChildren);
  // started by the rx CLI: if the CLI dies (SIGKILL, a closed terminal), the controller must not drive the run on
  // alone as an orphan (a later `rx run --resume` would race it for the step events); the run directory keeps what
  // is done, so stop at once
  if (process.send) {
    process.channel?.unref(); // the channel alone never keeps the controller up
    process.on('disconnect', () => {
      process.stderr.write('\ncontroller: the rx CLI that started it is gone: stopping (continue with rx run --resume)\n');
      process.exit(137);
    });
  }
  return abort.signal;
}

function exitCodeOf(outcome: RunOutcome): number {
  if (outcome.status === 'complete' && outcome.recordFails) return EXIT_RECORD_FAILS;
  if (outcome.status === 'stopped' && (outcome.message ?? '').startsWith(BUDGET_STOP)) return EXIT_BUDGET;
  return EXIT[outcome.status];
}

async function runCommand(argv: string[], config: ControllerConfig, entry: ControllerEntryOptions): Promise<number> {
  const args = parseRunArgs(argv);
  const outcome = await runExperiment({ ...args, ...entry, config, progress: progressFor(process.stdout, process.stderr), signal: interruptSignal() });
  return exitCodeOf(outcome);
}

async function serviceMode(config: ControllerConfig, entry: ControllerEntryOptions): Promise<number> {
  const metrics = createRxMetrics({ service: 'controller' });
  if (config.RX_SPEC) {
    const out = path.join(config.RX_DATA_DIR, 'runs', config.RX_RUN_NAME ?? 'run');
    const resume = (await import('node:fs')).existsSync(path.join(out, 'run.json'));
    const outcome = await runExperiment({
      ...entry,
      ...(resume ? { resumeDir: out } : { specPath: config.RX_SPEC, outDir: out }),
      services: 'external',
      serviceMode: true,
      config,
      progress: progressFor(process.stdout, process.stderr),
      signal: interruptSignal(),
    });
    return exitCodeOf(outcome);
  }
  const backend = config.RX_BACKEND_URL ? new TinkerBackend({ baseUrl: config.RX_BACKEND_URL, apiKey: config.TINKER_API_KEY ?? 'rx-no-key' }) : null;
  const http = await startControllerHttp(
    { redis: () => pingRedis(config.REDIS_URL ?? DEFAULT_REDIS_URL), backend: async () => (backend ? backend.ping() : false), runId: () => null, phase: () => null, metrics },
    { host: controllerHttpHost(config.HOST, 'service'), port: config.PORT, queues: [] },
  );
  process.stdout.write(`controller: serving /health and /metrics at ${http.url} (set RX_SPEC to run an experiment)\n`);
  await new Promise<void>((resolve) => {
    process.once('SIGTERM', () => resolve());
    process.once('SIGINT', () => resolve());
  });
  await http.close();
  await backend?.close();
  return 0;
}

async function main(argv: string[], entry: ControllerEntryOptions): Promise<number> {
  const config = parseControllerConfig(process.env);
  const [command, ...rest] = argv;
  if (command === 'run') return runCommand(rest, config, entry);
  if (command === undefined) return serviceMode(config, entry);
  throw new RunUserError(`unknown controller command '${command}' (run, or none for service mode; rx status, rx export and rx check-record run in the rx CLI)`);
}

/** what an entry point may give the controller: production's gives nothing; a test's, its backend double */
export type ControllerEntryOptions = Pick<RunOptions, 'backendFor'>;

/** the controller's process: the command of argv, its exit code, and a user's mistake as one line (exit 2) */
export function controllerMain(entry: ControllerEntryOptions = {}): void {
  main(process.argv.slice(2), entry).then(
    (code) => {
      // a run closes what it opened; exit anyway so that no forgotten timer keeps a finished run alive
      process.exit(code);
    },
    (err: unknown) => {
      if (err instanceof RunUserError || err instanceof ControllerConfigError || err instanceof RunStateError) {
        process.stderr.write(`rx: ${err.message}\n`);
        if (err instanceof RunUserError) for (const d of err.details) process.stderr.write(`  ${d}\n`);
        process.exit(2);
      }
      process.stderr.write(`rx: internal error: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
      process.exit(1);
    },
  );
}
