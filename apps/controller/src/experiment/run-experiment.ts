// rx run: a whole pre-registered experiment from its spec, phase by phase, each phase's result written to the
// run directory when it completes (so --resume continues from the last completed step):
//   open the run (open-run.ts) -> setup: Redis, services, backend (start-infra.ts) -> the phase table
//   (phase-table.ts: effective config, shared initialisation, correctness preflight, pilot + gates, both arms,
//   greedy evaluation, decision) -> the record, however the attempt ended.
import { cpus } from 'node:os';
import { rendererFor, resolveRunTokenizer, TinkerSessionLostError, TinkerStuckError, TokenizerUnavailableError, type Renderer, type RunTokenizer } from '@rx/backend';
import { QUEUE_NAME_LIST } from '@rx/contracts';
import { createRxMetrics, type QueueSnapshot } from '@rx/metrics';
import { stepDeadlineMs } from '@rx/pipeline';
import { PHASES, readRunFileIfExists, type PhaseName, type RunRecord, type RunState } from '@rx/run-dir';
import { describeRevision } from '@rx/spec';
import { checkGivenRedis, RedisUnavailableError } from '../infra/redis-locator';
import { REPO_ROOT } from '../infra/repo-root';
import { deletePrefixKeys } from '../infra/step-bus';
import { EXCHANGE_RECORD, exportAndCheck, recheck } from '@rx/run-tools';
import { writeRecord } from '../phases/record/record.phase';
import { codeRevision } from '../phases/record/source-hashes';
import { acquireRunLock } from '../run/run-lock';
import { RunStopped, type ExperimentContext } from './experiment-context';
import { loadExperimentData } from './experiment-data';
import { BUDGET_STOP, BudgetGuard, budgetInForce, describeCaps } from './budget-guard';
import { budgetCharges, priceFor, upperBoundTokens } from '@rx/plan';
import { planRun, type OpenedRun } from './open-run';
import { PHASE_TABLE, type PhaseResults } from './phase-table';
import { Interrupted, RunUserError, type RunOptions, type RunOutcome } from '../composition/run-options';
import { checkSameRun, codeRelevantSha256, failedRunLine } from './resume-check';
import { startInfra, type Infra } from '../composition/start-infra';
import { checkTinkerCredentials, tinkerCredentials } from '../composition/tinker-credentials';

export async function runExperiment(opts: RunOptions): Promise<RunOutcome> {
  const plan = planRun(opts);
  // a wrong key or URL, or a base model the service does not serve, is a user's mistake found before the run
  // directory is written, not a failed run
  // the one tokenizer file of the run (a Hugging Face base model), or one line before anything is written (first:
  // it needs no network, and offline with nothing cached its line is the one that helps)
  const tokenizer = runTokenizer(plan.spec.base_model, opts.config);
  if (plan.backend === 'tinker') await checkTinkerCredentials(tinkerCredentials(opts.config), { baseModel: plan.spec.base_model, rank: plan.spec.lora_rank });
  // REDIS_URL as given, or one line before the run directory is written (a private Redis comes with the services)
  if (opts.config.REDIS_URL !== undefined) {
    await checkGivenRedis(opts.config.REDIS_URL).catch((err: unknown) => {
      throw err instanceof RedisUnavailableError ? new RunUserError(err.message) : err;
    });
  }
  const run = plan.open();
  const code = codeRevision(REPO_ROOT);
  const relevant = codeRelevantSha256(code.files);
  // a resumed run is the run it was (spec, effective configuration, code), or one line, before anything is written
  const accepted = run.resumed ? checkSameRun(run.dir, run.manifest, run.spec, run.state.state, relevant, opts.acceptChanges === true) : [];
  if (run.resumed) checkSameTokenizer(run, tokenizer);
  const release = await acquireRunLock(run.dir, { staleAfterMs: opts.config.RX_RUN_LOCK_STALE_MS });
  try {
    return await driveRun(run, opts, { treeSha256: code.tree_sha256, relevantSha256: relevant, accepted }, tokenizer);
  } finally {
    release();
  }
}

interface AttemptCode {
  treeSha256: string;
  relevantSha256: string;
  /** changes since the run started that --accept-changes accepted (the attempt's revision) */
  accepted: string[];
}

/** The run's tokenizer (RX_TOKENIZER_PATH, else the user's cache); a RunUserError (exit 2, nothing written) when there is none. */
function runTokenizer(baseModel: string, config: RunOptions['config']): RunTokenizer | null {
  try {
    return resolveRunTokenizer(baseModel, { RX_TOKENIZER_PATH: config.RX_TOKENIZER_PATH, RX_CACHE_DIR: config.RX_CACHE_DIR, XDG_CACHE_HOME: process.env.XDG_CACHE_HOME });
  } catch (err) {
    if (err instanceof TokenizerUnavailableError) throw new RunUserError(err.message);
    throw err;
  }
}

/** One tokenizer per run: a resumed run reads the file its effective configuration recorded (same sha256), or one line. */
function checkSameTokenizer(run: OpenedRun, tokenizer: RunTokenizer | null): void {
  const recorded = readRunFileIfExists(run.dir, 'effective-config.json')?.tokenizer;
  if (!recorded || recorded.sha256 === tokenizer?.sha256) return;
  throw new RunUserError(
    `the run was started with the tokenizer sha256 ${recorded.sha256} (${recorded.path}); this attempt would read ${tokenizer ? `sha256 ${tokenizer.sha256} (${tokenizer.path})` : 'none'}: set RX_TOKENIZER_PATH to the run's file (nothing was written)`,
  );
}

async function driveRun(run: OpenedRun, opts: RunOptions, attemptCode: AttemptCode, tokenizer: RunTokenizer | null): Promise<RunOutcome> {
  const { dir, state, progress } = { ...run, progress: opts.progress };
  const status = state.state.status;
  const budgetStopped = status === 'stopped' && (state.state.reason ?? '').startsWith(BUDGET_STOP);
  if (run.resumed && budgetStopped && !run.budgetRaised) {
    progress.info(`run ${run.manifest.runId} in ${dir.root} was stopped by its budget (${state.state.reason}); nothing to resume until it is raised: rx run --resume ${dir.root} --override raise-budget.json`);
    return { dir: dir.root, status, record: readRunFileIfExists(dir, 'record.json'), message: state.state.reason };
  }
  if (run.resumed && (status === 'complete' || (status === 'stopped' && !budgetStopped))) {
    progress.info(`run ${run.manifest.runId} in ${dir.root} is already ${status}; nothing to resume`);
    let record = readRunFileIfExists(dir, 'record.json');
    // a controller killed after its attempt ended and before it wrote the run's record: the resume writes it
    if (!record) {
      progress.info('record: not written by the attempt that finished the run; writing it now');
      record = writeRecord({ dir, manifest: run.manifest, spec: run.spec, sourceSpec: run.sourceSpec, cpus: cpus().length }, state);
    }
    // a controller killed after its attempt ended and before it exported the exchange record: the resume exports it
    const exported = dir.exists(dir.path(EXCHANGE_RECORD));
    if (status === 'complete' && !exported) progress.info('exchange record: not written by the attempt that finished the run; exporting it now');
    // a restarted container resumes a finished run: its exit code still says whether its record passes
    const check = status !== 'complete' ? null : exported ? recheck(dir.root) : exportAndCheck(dir.root);
    if (check && (!check.pass || !exported)) for (const line of check.lines) progress.info(`exchange record: ${line}`);
    return { dir: dir.root, status, record, message: state.state.reason, recordFails: check ? !check.pass : undefined };
  }
  const abort = new AbortController();
  const onAbort = () => abort.abort(opts.signal.reason ?? new Interrupted('interrupted'));
  if (opts.signal.aborted) onAbort();
  opts.signal.addEventListener('abort', onAbort, { once: true });
  let snapshot: (() => Promise<readonly QueueSnapshot[]>) | null = null;
  const metrics = createRxMetrics({ service: 'controller', queueSnapshot: () => (snapshot ? snapshot() : Promise.resolve([])) });
  let current: PhaseName | null = null;
  const failedBefore = run.resumed ? failedRunLine(state.state, PHASE_TABLE.find((e) => !state.isDone(e.phase))?.phase ?? null) : null;
  state.beginAttempt(run.resumed, attemptCode.treeSha256, attemptCode.accepted, attemptCode.relevantSha256);
  progress.info(`${run.resumed ? 'resuming' : 'starting'} run ${run.manifest.runId}: "${run.spec.title}" (${run.manifest.backend} backend, services ${opts.services}) in ${dir.root}`);
  if (run.spec.revision) progress.info(`spec ${describeRevision(run.spec.revision)}: ${run.spec.revision.why}`);
  if (failedBefore) progress.info(failedBefore);
  for (const change of attemptCode.accepted) progress.warn(`resumed with --accept-changes (recorded in state.json as this attempt's revision): ${change}`);

  let phaseStartedAt: number | null = null;
  const inForce = budgetInForce(dir, run.spec);
  const price = priceFor(run.manifest.backend, run.spec.base_model);
  const budget = new BudgetGuard(inForce.caps, state, () => (phaseStartedAt === null ? 0 : (Date.now() - phaseStartedAt) / 1000), `rx run --resume ${dir.root} --override raise-budget.json`, {
    charges: budgetCharges(run.spec, upperBoundTokens(run.spec)),
    price,
  });
  if (inForce.revision > 0) progress.info(`budget revision ${inForce.revision}: ${describeCaps(inForce.caps)} (budget-revisions.json)`);
  if (inForce.caps.max_usd !== undefined && !price) progress.warn(`budget.max_usd ${inForce.caps.max_usd} cannot be held: the pinned price table has no entry for ${run.manifest.backend} ${run.spec.base_model} (rx plan says so too); the run holds its wall and token caps only`);

  let infra: Infra | null = null;
  let outcome: RunState['status'] = 'running';
  let message: string | null = null;
  try {
    const setupStarted = Date.now();
    current = 'setup';
    infra = await startInfra(run, opts, metrics, abort, () => current, tokenizer?.path ?? null);
    const repository = infra.bus.queueRepository;
    snapshot = () => repository.snapshot(QUEUE_NAME_LIST);
    const renderer: Renderer = await rendererFor(run.spec.base_model, tokenizer ? { tokenizerPath: tokenizer.path } : {});
    if (tokenizer) progress.info(`tokenizer: ${tokenizer.path} (sha256 ${tokenizer.sha256.slice(0, 12)}, ${tokenizer.source}${tokenizer.revision ? `, revision ${tokenizer.revision}` : ''}${tokenizer.matches_pin === false ? ", NOT rx's pinned file" : ''}), for the controller and every service`);
    const data = opts.data ?? (await loadExperimentData(run.spec, { repoRoot: REPO_ROOT }));
    abort.signal.addEventListener('abort', () => infra?.bus.fail(abort.signal.reason instanceof Error ? abort.signal.reason : new Interrupted('interrupted')), { once: true });
    state.addWall('setup', (Date.now() - setupStarted) / 1000);
    state.complete('setup');

    const ctx: ExperimentContext = {
      dir,
      manifest: run.manifest,
      state,
      spec: run.spec,
      data,
      backend: infra.backend,
      renderer,
      tokenizer,
      bus: infra.bus,
      progress,
      metrics,
      concurrency: opts.config.RX_CONCURRENCY,
      // a step may take every attempt of every stage the graph allows before the controller calls it stalled
      stepStallTimeoutMs: opts.stepStallTimeoutMs ?? stepDeadlineMs(),
      signal: abort.signal,
      budget,
      hooks: {
        afterTrainingStep: (arm, step) => {
          if (opts.interruptAfterTrainingStep !== undefined && step >= opts.interruptAfterTrainingStep) abort.abort(new Interrupted(`interrupted after training step ${step} of ${arm} (test hook)`));
        },
      },
    };

    // the phase table, in order: a phase done by an earlier attempt is read back (when a later one needs it)
    const done: PhaseResults = {};
    for (const entry of PHASE_TABLE) {
      if (state.isDone(entry.phase)) {
        entry.load?.(ctx, done);
        continue;
      }
      current = entry.phase;
      metrics.setPhase(entry.phase, PHASES);
      const started = Date.now();
      phaseStartedAt = started;
      try {
        await runOnLiveSession(entry.phase, () => entry.run(ctx, done), progress);
        if (!dir.exists(dir.path(entry.resultFile))) throw new Error(`the ${entry.phase} phase completed without writing ${entry.resultFile}`);
        state.addWall(entry.phase, (Date.now() - started) / 1000);
        state.complete(entry.phase);
      } catch (err) {
        if (!state.isDone(entry.phase)) state.addWall(entry.phase, (Date.now() - started) / 1000);
        throw err;
      } finally {
        phaseStartedAt = null;
      }
      if (opts.interruptAfter === entry.phase) throw new Interrupted(`interrupted after ${entry.phase} (test hook)`);
    }
    outcome = 'complete';
  } catch (err) {
    if (err instanceof RunStopped) {
      outcome = 'stopped';
      message = err.message;
      progress.info(`run stopped: ${err.message}`);
    } else if (isStuck(err) || err instanceof TinkerSessionLostError) {
      // the service made no progress for the stuck timeout, or lost the controller's session in a phase that is not
      // started again in-process: nothing is lost, the run continues with --resume
      outcome = 'interrupted';
      message = `${err instanceof Error ? err.message : String(err)} (during ${current ?? 'setup'})`;
      progress.info(`run interrupted: ${message}; continue with rx run --resume ${dir.root}`);
    } else if (err instanceof Interrupted || abort.signal.aborted) {
      outcome = 'interrupted';
      const reason = abort.signal.reason instanceof Error ? abort.signal.reason.message : err instanceof Error ? err.message : String(err);
      message = `${reason} (during ${current ?? 'setup'})`;
      progress.info(`run interrupted: ${message}; continue with rx run --resume ${dir.root}`);
    } else if (err instanceof RunUserError) {
      outcome = 'failed';
      message = err.message;
      state.endAttempt('failed', message);
      await infra?.close();
      opts.signal.removeEventListener('abort', onAbort);
      throw err;
    } else {
      outcome = 'failed';
      message = err instanceof Error ? err.message : String(err);
      progress.info(`run failed during ${current ?? 'setup'}: ${message}`);
    }
  } finally {
    opts.signal.removeEventListener('abort', onAbort);
  }

  const closing = infra?.close();
  state.endAttempt(outcome, message);
  let record: RunRecord | null = null;
  let recordFails: boolean | undefined;
  if (outcome !== 'interrupted') {
    record = writeRecord({ dir, manifest: run.manifest, spec: run.spec, sourceSpec: run.sourceSpec, cpus: cpus().length }, state);
    progress.info(`record: ${dir.recordFile}`);
    progress.info(`verdict: ${record.verdict.outcome}: ${record.verdict.reasoning[0]}`);
    if (outcome === 'complete') {
      const check = exportAndCheck(dir.root);
      for (const line of check.lines) progress.info(`exchange record: ${line}`);
      recordFails = !check.pass;
      if (recordFails) progress.info('exchange record: FAILS a validator (see above): rx run exits 4');
    }
  }
  await closing;
  // a finished run leaves nothing in a shared Redis under the prefix it owned (its services were its own)
  if (infra && opts.services === 'spawn' && !infra.redis.private && (outcome === 'complete' || outcome === 'stopped')) {
    await deletePrefixKeys(infra.redis.url, infra.prefix).catch(() => 0);
  }
  progress.close();
  return { dir: dir.root, status: outcome, record, message, recordFails };
}

/** A Tinker call stuck past the stuck timeout, in this process or in a service whose step failed with it. */
function isStuck(err: unknown): boolean {
  return err instanceof TinkerStuckError || (err instanceof Error && /made no progress for .* \(the stuck timeout; last: /.test(err.message));
}

/** Phases whose backend work is the controller's own calls (no pipeline jobs in flight): safe to start again at once. */
const RESTARTED_ON_SESSION_LOSS: ReadonlySet<PhaseName> = new Set(['shared_init', 'preflight', 'evaluation']);
/** How often one phase is started again on a new session in one attempt before the loss ends the attempt (interrupted). */
const MAX_SESSION_RESTARTS = 3;

/**
 * A phase that met the loss of the controller's Tinker session (a client it held is gone with it) is started again
 * from its beginning on a new session, as a resumed run would (the Tinker client opens one for the next client;
 * whatever the phase wrote survives: evaluation keeps its finished items); at most MAX_SESSION_RESTARTS times.
 */
export async function runOnLiveSession(phase: PhaseName, run: () => Promise<void>, progress: { warn(line: string): void }): Promise<void> {
  for (let restarts = 0; ; restarts++) {
    try {
      return await run();
    } catch (err) {
      if (!(err instanceof TinkerSessionLostError) || !RESTARTED_ON_SESSION_LOSS.has(phase) || restarts >= MAX_SESSION_RESTARTS) throw err;
      progress.warn(`the service lost the controller's session during ${phase} (${err.message.split('\n')[0]}): ${phase} starts again on a new session (${restarts + 1} of at most ${MAX_SESSION_RESTARTS})`);
    }
  }
}
