// rx run: a whole pre-registered experiment from its spec, phase by phase, each phase's result written to the
// run directory when it completes (so --resume continues from the last completed step):
//   setup (Redis, services, backend) -> effective config -> shared initialisation -> correctness preflight ->
//   pilot + gates (+ the one calibration) -> both arms through the services -> greedy evaluation -> decision -> record
import { randomBytes } from 'node:crypto';
import { cpus } from 'node:os';
import * as path from 'node:path';
import { readFileSync } from 'node:fs';
import { CHAR_BASE_MODELS, rendererFor, TINKER_WIRE_SDK_VERSION, TinkerApiError, TinkerBackend, TinkerHttp, type PolicyBackend, type Renderer } from '@rx/backend';
import { QUEUE_NAME_LIST } from '@rx/contracts';
import { createRxMetrics, type QueueSnapshot, type RxMetrics } from '@rx/metrics';
import { backendFromConfig, HASH_CHAIN_BACKEND_URL } from '@rx/pipeline';
import { applySpecOverride, describeRevision, jsonSyntaxWhere, loadSpecText, parseSpec, pilotSettings, treatmentArm, type ExperimentSpec, type SpecOverride } from '@rx/spec';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import type { ControllerConfig } from '../config';
import { redactUrl } from '../config';
import { controllerHttpHost, startControllerHttp, type ControllerHttp } from '../http/controller-http';
import { freePort } from '../infra/free-port';
import { locateRedis, pingRedis, type RedisHandle } from '../infra/redis-locator';
import { REPO_ROOT } from '../infra/repo-root';
import { acquireRunLock } from '../run/run-lock';
import { ServiceSupervisor, type ServiceSpec } from '../infra/service-supervisor';
import { deletePrefixKeys, StepBus } from '../infra/step-bus';
import { runDecision } from '../phases/decision.phase';
import { writeEffectiveConfig } from '../phases/effective-config.phase';
import { runEvaluation } from '../phases/evaluation/evaluation.phase';
import { runPilot } from '../phases/pilot.phase';
import { runPreflight } from '../phases/preflight/preflight.phase';
import { buildRecord } from '../phases/record/record.phase';
import { codeRevision } from '../phases/record/source-hashes';
import { exportAndCheck } from '../exchange/exchange-lines';
import { runSharedInit } from '../phases/shared-init.phase';
import { runTraining } from '../phases/training.phase';
import type { ProgressReporter } from '../progress/progress.reporter';
import { canonicalJson, sha256Hex } from '../run/canonical-json';
import { checkWritableDir, RunDir, type DecisionSummary, type EvaluationResult, type PilotResult, type RunRecord, type SharedInitResult, type ArmTraining, type TrainingResult } from '@rx/run-dir';
import { checkRunFilesAgainstState, loadRunState, readManifest, readRunFile, readRunFileIfExists } from '@rx/run-dir';
import { PHASES, RunStateStore, type PhaseName, type RunManifest, type RunState } from '@rx/run-dir';
import { RunStopped, type ExperimentContext } from './experiment-context';
import { loadExperimentData, type ExperimentData } from './experiment-data';

export type BackendKind = 'embedded' | 'tinker';
export type ServicesMode = 'spawn' | 'external';

export interface RunOptions {
  /** a new run: the spec file and where to put the run */
  specPath?: string;
  outDir?: string;
  overridePath?: string;
  /** continue the run in this directory */
  resumeDir?: string;
  /** default: embedded for the embedded model, tinker otherwise */
  backend?: BackendKind;
  services: ServicesMode;
  config: ControllerConfig;
  progress: ProgressReporter;
  signal: AbortSignal;
  /** the controller's own HTTP server: a port (0: any free one), or null for none; default config.PORT */
  httpPort?: number | null;
  /** started as the service-mode controller (a container): its HTTP server binds 0.0.0.0 unless HOST says otherwise */
  serviceMode?: boolean;
  /**
   * the model behind the embedded backend: the embedded transformer (default), the policy server's in-memory
   * test model, or (tests only) the pipeline's hash-chain test double in every process, with no policy server
   */
  policyBackend?: 'embedded' | 'memory' | 'hash-chain';
  /** tests only: the problems to train and evaluate on, in place of the spec's dataset */
  data?: ExperimentData;
  stepStallTimeoutMs?: number;
  healthTimeoutMs?: number;
  /** test hook: end the attempt as interrupted once this phase has completed */
  interruptAfter?: PhaseName;
  /** test hook: interrupt the attempt once an arm has completed this training step */
  interruptAfterTrainingStep?: number;
}

export interface RunOutcome {
  dir: string;
  status: RunState['status'];
  record: RunRecord | null;
  message: string | null;
}

/** A mistake of the user's (flags, files, environment): one line (plus path-named spec errors), exit 2. */
export class RunUserError extends Error {
  override readonly name = 'RunUserError';
  constructor(
    message: string,
    readonly details: string[] = [],
  ) {
    super(message);
  }
}

class Interrupted extends Error {
  override readonly name = 'Interrupted';
}

// ---------------------------------------------------------------------------------------------------------------
// Opening a run: a new one (spec [+ override] -> run.json, spec.json, state.json) or an existing one (--resume)

interface OpenedRun {
  dir: RunDir;
  manifest: RunManifest;
  spec: ExperimentSpec;
  sourceSpec: ExperimentSpec | null;
  state: RunStateStore;
  resumed: boolean;
}

function readSpec(file: string): { spec: ExperimentSpec; text: string } {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw new RunUserError(`cannot read spec ${file}: ${(err as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : (err as Error).message}`);
  }
  const parsed = loadSpecText(text);
  if (!parsed.ok) throw new RunUserError(`${file}: invalid spec (${parsed.errors.length} error${parsed.errors.length === 1 ? '' : 's'})`, parsed.errors);
  return { spec: parsed.spec, text };
}

function readOverride(file: string): { override: SpecOverride; text: string } {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw new RunUserError(`cannot read override ${file}: ${(err as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : (err as Error).message}`);
  }
  let value: unknown;
  try {
    value = JSON.parse(text.replace(/^\uFEFF/, ''));
  } catch (err) {
    throw new RunUserError(`${file}: invalid JSON: ${jsonSyntaxWhere(err, text)}`);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new RunUserError(`${file}: must be a JSON object (a partial spec)`);
  return { override: value as SpecOverride, text };
}

const EXTERNAL_NEEDS_BACKEND = '--services external needs RX_BACKEND_URL (the policy server the services use, e.g. http://127.0.0.1:8000); nothing was written';

export function defaultBackend(spec: ExperimentSpec): BackendKind {
  return CHAR_BASE_MODELS.includes(spec.base_model) ? 'embedded' : 'tinker';
}

/** Tinker needs its key and a base URL; checked before any work. */
export function tinkerCredentials(config: ControllerConfig): { apiKey: string; baseUrl: string } {
  const baseUrl = config.TINKER_BASE_URL ?? config.RX_BACKEND_URL;
  const missing = [config.TINKER_API_KEY ? null : 'TINKER_API_KEY', baseUrl ? null : 'TINKER_BASE_URL'].filter((x): x is string => x !== null);
  if (missing.length > 0) {
    throw new RunUserError(`--backend tinker needs ${missing.join(' and ')}: export TINKER_API_KEY=<your key> and TINKER_BASE_URL=<the Tinker service URL> (nothing was started)`);
  }
  return { apiKey: config.TINKER_API_KEY as string, baseUrl: baseUrl as string };
}

/**
 * One authenticated call (client/config, as the Tinker SDK opens a session) with the key and URL the run would use:
 * a refused key, a URL that does not answer or is not a Tinker service is one line naming the variable (exit 2).
 */
export async function checkTinkerCredentials(creds: { apiKey: string; baseUrl: string }): Promise<void> {
  const origin = redactUrl(creds.baseUrl);
  const http = new TinkerHttp({ baseUrl: creds.baseUrl, apiKey: creds.apiKey, timeoutMs: 15_000, retry: { retries: 0, baseDelayMs: 0, maxDelayMs: 0 }, userAgent: 'rx-credential-check' });
  try {
    await http.request({ method: 'POST', path: '/api/v1/client/config', body: { sdk_version: TINKER_WIRE_SDK_VERSION }, retries: 0 });
  } catch (err) {
    if (err instanceof TinkerApiError && (err.status === 401 || err.status === 403)) {
      throw new RunUserError(`TINKER_API_KEY was refused by ${origin} (HTTP ${err.status}): export the key of your Tinker account (nothing was written)`);
    }
    if (err instanceof TinkerApiError) throw new RunUserError(`TINKER_BASE_URL ${origin} answered HTTP ${err.status} to client/config: is it the Tinker service's URL? (nothing was written)`);
    throw new RunUserError(`TINKER_BASE_URL ${origin} did not answer (${err instanceof Error ? err.message.split('\n')[0] : String(err)}): check the URL and the network (nothing was written)`);
  } finally {
    http.close();
  }
}

function newRunId(outDir: string): string {
  const base = path.basename(path.resolve(outDir)).replace(/[^A-Za-z0-9_.-]/g, '-').replace(/^[^A-Za-z0-9]+/, '').slice(0, 24) || 'run';
  const stamp = new Date().toISOString().replace(/[-:]/g, '').replace(/\..*$/, '').replace('T', '-');
  return `${base}-${stamp}-${randomBytes(2).toString('hex')}`;
}

type OpenRunOptions = Pick<RunOptions, 'specPath' | 'outDir' | 'overridePath' | 'resumeDir' | 'backend' | 'services' | 'config'>;

export function openRun(opts: OpenRunOptions): OpenedRun {
  return planRun(opts).open();
}

/**
 * Everything about a run that can be checked without writing: the flags, the spec, the run directory (a resumed
 * one's files against its state); `open` then writes a new run's files (a resumed run's are only read).
 */
export function planRun(opts: OpenRunOptions): { backend: BackendKind; open: () => OpenedRun } {
  if (opts.resumeDir) {
    const dir = new RunDir(opts.resumeDir);
    if (!dir.exists(dir.root)) throw new RunUserError(`--resume ${opts.resumeDir}: no such directory`);
    const manifest = readManifest(dir);
    const spec = readRunFile(dir, 'spec.json');
    if (opts.specPath) {
      const given = sha256Hex(readFileSync(opts.specPath));
      if (given !== manifest.spec.sourceSha256) throw new RunUserError(`--spec ${opts.specPath} is not the spec run ${manifest.runId} was started from (${manifest.spec.source}); drop --spec to resume`);
    }
    if (opts.overridePath) throw new RunUserError('--override cannot change a run being resumed; the run keeps its spec.json');
    if (opts.backend && opts.backend !== manifest.backend) throw new RunUserError(`run ${manifest.runId} uses the ${manifest.backend} backend; it cannot resume on ${opts.backend}`);
    if (opts.services === 'external' && manifest.backend === 'embedded' && !opts.config.RX_BACKEND_URL) throw new RunUserError(EXTERNAL_NEEDS_BACKEND);
    const state = loadRunState(dir);
    // a half-deleted run is refused here, before anything starts
    checkRunFilesAgainstState(dir, state.state, spec.arms.map((a) => a.name));
    const source = dir.readJsonIfExists(dir.path('spec.source.json'));
    const sourceSpec = source ? parseSpec(source) : null;
    const opened: OpenedRun = { dir, manifest, spec, sourceSpec: sourceSpec?.ok ? sourceSpec.spec : null, state, resumed: true };
    return { backend: manifest.backend, open: () => opened };
  }

  if (!opts.specPath) throw new RunUserError('--spec is required (or --resume <dir>)');
  if (!opts.outDir) throw new RunUserError('--out is required (or --resume <dir>)');
  const { spec: sourceSpec, text } = readSpec(opts.specPath);
  let spec = sourceSpec;
  let override: RunManifest['override'] = null;
  if (opts.overridePath) {
    const o = readOverride(opts.overridePath);
    const applied = applySpecOverride(sourceSpec, o.override);
    if (!applied.ok) throw new RunUserError(`${opts.overridePath}: the spec with this override is invalid (${applied.errors.length} error${applied.errors.length === 1 ? '' : 's'})`, applied.errors);
    spec = applied.spec;
    override = { source: opts.overridePath, sha256: sha256Hex(o.text) };
  }
  // the pilot's treatment steps draw the first prompts of the order too (the spec checks only steps * groups)
  const pilotPrompts = pilotSettings(spec).steps * treatmentArm(spec).groups_per_batch;
  if (spec.dataset.n_examples < pilotPrompts) {
    throw new RunUserError(`dataset.n_examples is ${spec.dataset.n_examples}, but the pilot's ${pilotSettings(spec).steps} ${treatmentArm(spec).name} steps draw ${pilotPrompts} prompts: raise it`);
  }
  const backend = opts.backend ?? defaultBackend(spec);
  if (backend === 'tinker') tinkerCredentials(opts.config);
  if (backend === 'embedded' && opts.services === 'external' && !opts.config.RX_BACKEND_URL) throw new RunUserError(EXTERNAL_NEEDS_BACKEND);

  const dir = new RunDir(opts.outDir);
  try {
    checkWritableDir(dir.root);
  } catch (err) {
    throw new RunUserError(`--out ${opts.outDir}: ${(err as Error).message}; choose a directory you can write (nothing was written)`);
  }
  if (dir.exists(dir.runFile)) {
    const existing = readManifest(dir);
    const status = readRunFileIfExists(dir, 'state.json')?.status ?? 'unknown';
    if (status === 'complete' || status === 'stopped') {
      throw new RunUserError(`${opts.outDir} already holds run ${existing.runId}, ${status} (rx status ${opts.outDir}); to run again, remove it or choose another --out`);
    }
    throw new RunUserError(`${opts.outDir} already holds run ${existing.runId} (${status}): resume it with --resume ${opts.outDir}, or choose another --out`);
  }
  if (!dir.isEmpty()) throw new RunUserError(`${opts.outDir} is not empty and holds no run: choose an empty or new directory for --out`);
  const manifest: RunManifest = {
    version: 1,
    runId: newRunId(opts.outDir),
    createdAt: new Date().toISOString(),
    spec: { source: opts.specPath, sourceSha256: sha256Hex(text), sha256: sha256Hex(canonicalJson(spec)) },
    override,
    backend,
    services: opts.services,
  };
  return {
    backend,
    open: () => {
      dir.writeJson(dir.specFile, spec);
      if (override) dir.writeJson(dir.path('spec.source.json'), sourceSpec);
      dir.writeJson(dir.runFile, manifest);
      return { dir, manifest, spec, sourceSpec: override ? sourceSpec : null, state: RunStateStore.create(dir, manifest.runId), resumed: false };
    },
  };
}

// ---------------------------------------------------------------------------------------------------------------
// The infrastructure of one attempt: Redis, the services, the backend client, the step bus, the HTTP server

interface Infra {
  redis: RedisHandle;
  supervisor: ServiceSupervisor | null;
  backend: PolicyBackend;
  bus: StepBus;
  http: ControllerHttp | null;
  prefix: string;
  close(): Promise<void>;
}

async function startInfra(run: OpenedRun, opts: RunOptions, metrics: RxMetrics, abort: AbortController, phase: () => string | null): Promise<Infra> {
  const { config, progress } = opts;
  const closers: Array<() => Promise<void>> = [];
  const close = async (): Promise<void> => {
    for (const c of closers.reverse()) await c().catch(() => undefined);
    closers.length = 0;
  };
  try {
    const redis = await locateRedis({ url: config.REDIS_URL, allowPrivate: opts.services === 'spawn', dataDir: path.join(run.dir.servicesDataDir, 'redis'), log: (l) => progress.info(l) });
    closers.push(() => redis.close());
    const prefix = opts.services === 'spawn' ? `rx.${run.manifest.runId}` : config.RX_QUEUE_PREFIX;
    let supervisor: ServiceSupervisor | null = null;
    let backendUrl: string;
    let apiKey: string;
    if (run.manifest.backend === 'tinker') {
      ({ baseUrl: backendUrl, apiKey } = tinkerCredentials(config));
    } else if (opts.services === 'external') {
      if (!config.RX_BACKEND_URL) throw new RunUserError(EXTERNAL_NEEDS_BACKEND);
      backendUrl = config.RX_BACKEND_URL;
      apiKey = config.TINKER_API_KEY ?? 'rx-local-policy-server';
    } else if (opts.policyBackend === 'hash-chain') {
      backendUrl = HASH_CHAIN_BACKEND_URL;
      apiKey = 'rx-no-key';
    } else {
      backendUrl = '';
      apiKey = config.RX_POLICY_API_KEY ?? `rx-local-${randomBytes(12).toString('hex')}`;
    }
    if (opts.services === 'spawn') {
      supervisor = new ServiceSupervisor({ logsDir: run.dir.logsDir, healthTimeoutMs: opts.healthTimeoutMs, signal: abort.signal });
      supervisor.onUnexpectedExit((name, code, signal) => abort.abort(new Error(`the ${name} service exited (${code ?? signal}) during the run; see ${path.join(run.dir.logsDir, `${name}.log`)}`)));
      closers.push(() => (supervisor as ServiceSupervisor).stop());
      const dataDir = run.dir.servicesDataDir;
      if (run.manifest.backend === 'embedded' && opts.policyBackend !== 'hash-chain') {
        const port = await freePort();
        progress.info(`starting the policy server (${opts.policyBackend ?? 'embedded'} model) ...`);
        const env: Record<string, string> = {
          HOST: '127.0.0.1',
          RX_DATA_DIR: path.join(dataDir, 'policy-server'),
          RX_POLICY_BACKEND: opts.policyBackend ?? 'embedded',
          RX_POLICY_API_KEY: apiKey,
        };
        if (config.RX_POLICY_LATENCY_MS !== undefined) env.RX_POLICY_LATENCY_MS = String(config.RX_POLICY_LATENCY_MS);
        const [server] = await supervisor.start([{ name: 'policy-server', port, env }]);
        backendUrl = server.url;
      }
      const common: Record<string, string> = { REDIS_URL: redis.url, RX_BACKEND_URL: backendUrl, TINKER_API_KEY: apiKey, RX_DATA_DIR: dataDir, RX_QUEUE_PREFIX: prefix, HOST: '127.0.0.1' };
      if (redis.insecureLocal) {
        // the services refuse a Redis without a password unless told this is a development machine: it is
        common.RX_ALLOW_INSECURE_REDIS = '1';
        progress.info(`Redis at ${redactUrl(redis.url)} has no password; the services rx run starts use it because it is on this machine (RX_ALLOW_INSECURE_REDIS=1)`);
      }
      const specs: ServiceSpec[] = [];
      // a worker's heap is capped so that V8 collects instead of growing over a long run (payloads are <= 1 MB)
      for (const name of ['sampler', 'grader', 'advantage', 'trainer']) specs.push({ name, port: await freePort(), env: { ...common }, nodeArgs: [`--max-old-space-size=${WORKER_HEAP_MB}`] });
      progress.info(`starting ${specs.map((s) => s.name).join(', ')} (logs in ${run.dir.relative(run.dir.logsDir)}/) ...`);
      await supervisor.start(specs);
    }
    const backend: PolicyBackend =
      backendUrl === HASH_CHAIN_BACKEND_URL ? backendFromConfig({ RX_BACKEND_URL: backendUrl }) : new TinkerBackend({ baseUrl: backendUrl, apiKey, logger: { warn: (m) => progress.warn(`backend: ${m}`) } });
    closers.push(() => backend.close());
    const bus = new StepBus({
      redisUrl: redis.url,
      prefix,
      metrics,
      log: (l) => progress.warn(l),
      onDeadLetter: (letter) => {
        run.dir.appendLine(run.dir.deadLettersFile, { ...letter, seen_at: new Date().toISOString() });
        progress.warn(`dead letter: ${letter.sourceJobId} on ${letter.sourceQueue}: ${letter.error ?? letter.reason}`);
      },
    });
    closers.push(() => bus.close());
    await bus.start();
    await bus.waitForConsumers(opts.services === 'spawn' ? 30_000 : (opts.healthTimeoutMs ?? 120_000), abort.signal);
    let http: ControllerHttp | null = null;
    const port = opts.httpPort === undefined ? config.PORT : opts.httpPort;
    if (port !== null) {
      const host = controllerHttpHost(config.HOST, opts.serviceMode ? 'service' : 'rx-run');
      const boardConnection = new Redis(redis.url, { maxRetriesPerRequest: null });
      boardConnection.on('error', () => undefined);
      const boardQueues = QUEUE_NAME_LIST.map((q) => new Queue(q, { connection: boardConnection, prefix }));
      // a Redis outage is one line per outage on the board's queues, not a stack trace per queue and retry
      let boardDown = false;
      boardConnection.on('ready', () => (boardDown = false));
      for (const q of boardQueues) {
        q.on('error', (err: Error) => {
          if (boardDown) return;
          boardDown = true;
          progress.warn(`/queues: Redis unavailable (${err.message}); the board shows the queues again once it is back`);
        });
      }
      closers.push(async () => {
        await Promise.all(boardQueues.map((q) => q.close()));
        await boardConnection.quit().catch(() => boardConnection.disconnect());
      });
      const probes = { redis: () => pingRedis(redis.url), backend: () => backend.ping(), runId: () => run.manifest.runId, phase, metrics };
      try {
        http = await startControllerHttp(probes, { host, port, queues: boardQueues });
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'EADDRINUSE') throw err;
        http = await startControllerHttp(probes, { host, port: 0, queues: boardQueues });
        progress.warn(`port ${port} is taken: the controller serves /health, /metrics and /queues on ${http.url} instead`);
      }
      closers.push(() => (http as ControllerHttp).close());
    }
    progress.info(`Redis ${redactUrl(redis.url)} (prefix ${prefix}); backend ${run.manifest.backend} at ${redactUrl(backendUrl)}${http ? `; controller ${http.url} (/health, /metrics, /queues)` : ''}`);
    // where to scrape /metrics while the run goes on (Prometheus, or a person with curl)
    const endpoints: Record<string, string> = {};
    if (http) endpoints.controller = http.url;
    for (const s of supervisor?.running() ?? []) endpoints[s.name] = s.url;
    run.dir.writeJson(run.dir.endpointsFile, { written_at: new Date().toISOString(), endpoints });
    return { redis, supervisor, backend, bus, http, prefix, close };
  } catch (err) {
    await close();
    throw err;
  }
}

// ---------------------------------------------------------------------------------------------------------------
// The run

/** the old-space cap of each worker service rx run spawns (MB) */
const WORKER_HEAP_MB = 160;

export async function runExperiment(opts: RunOptions): Promise<RunOutcome> {
  const plan = planRun(opts);
  // a wrong key or URL is a user's mistake found before the run directory is written, not a failed run
  if (plan.backend === 'tinker') await checkTinkerCredentials(tinkerCredentials(opts.config));
  const run = plan.open();
  const release = await acquireRunLock(run.dir, { staleAfterMs: opts.config.RX_RUN_LOCK_STALE_MS });
  try {
    return await driveRun(run, opts);
  } finally {
    release();
  }
}

async function driveRun(run: OpenedRun, opts: RunOptions): Promise<RunOutcome> {
  const { dir, state, progress } = { ...run, progress: opts.progress };
  const status = state.state.status;
  if (run.resumed && (status === 'complete' || status === 'stopped')) {
    progress.info(`run ${run.manifest.runId} in ${dir.root} is already ${status}; nothing to resume`);
    return { dir: dir.root, status, record: readRunFileIfExists(dir, 'record.json'), message: state.state.reason };
  }
  const abort = new AbortController();
  const onAbort = () => abort.abort(opts.signal.reason ?? new Interrupted('interrupted'));
  if (opts.signal.aborted) onAbort();
  opts.signal.addEventListener('abort', onAbort, { once: true });
  let snapshot: (() => Promise<readonly QueueSnapshot[]>) | null = null;
  const metrics = createRxMetrics({ service: 'controller', queueSnapshot: () => (snapshot ? snapshot() : Promise.resolve([])) });
  let current: PhaseName | null = null;
  const code = codeRevision(REPO_ROOT);
  state.beginAttempt(run.resumed, code.tree_sha256);
  progress.info(`${run.resumed ? 'resuming' : 'starting'} run ${run.manifest.runId}: "${run.spec.title}" (${run.manifest.backend} backend, services ${opts.services}) in ${dir.root}`);
  if (run.spec.revision) progress.info(`spec ${describeRevision(run.spec.revision)}: ${run.spec.revision.why}`);

  let infra: Infra | null = null;
  let outcome: RunState['status'] = 'running';
  let message: string | null = null;
  try {
    const setupStarted = Date.now();
    current = 'setup';
    infra = await startInfra(run, opts, metrics, abort, () => current);
    const repository = infra.bus.queueRepository;
    snapshot = () => repository.snapshot(QUEUE_NAME_LIST);
    const renderer: Renderer = await rendererFor(run.spec.base_model);
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
      bus: infra.bus,
      progress,
      metrics,
      concurrency: opts.config.RX_CONCURRENCY,
      stepStallTimeoutMs: opts.stepStallTimeoutMs ?? 30 * 60_000,
      signal: abort.signal,
      hooks: {
        afterTrainingStep: (arm, step) => {
          if (opts.interruptAfterTrainingStep !== undefined && step >= opts.interruptAfterTrainingStep) abort.abort(new Interrupted(`interrupted after training step ${step} of ${arm} (test hook)`));
        },
      },
    };

    const phase = async <T>(name: PhaseName, runIt: () => Promise<T>, load: () => T): Promise<T> => {
      if (state.isDone(name)) return load();
      current = name;
      metrics.setPhase(name, PHASES);
      const started = Date.now();
      try {
        const result = await runIt();
        state.addWall(name, (Date.now() - started) / 1000);
        state.complete(name);
        if (opts.interruptAfter === name) throw new Interrupted(`interrupted after ${name} (test hook)`);
        return result;
      } catch (err) {
        if (!state.isDone(name)) state.addWall(name, (Date.now() - started) / 1000);
        throw err;
      }
    };

    await phase('effective_config', async () => writeEffectiveConfig(ctx), () => undefined);
    const init = await phase('shared_init', () => runSharedInit(ctx), () => readRunFile(dir, 'shared-init.json'));
    await phase('preflight', () => runPreflight(ctx, init), () => undefined);
    const pilot = await phase('pilot', () => runPilot(ctx, init), () => readRunFile(dir, 'pilot.json'));
    const training = await phase(
      'training',
      async () => {
        const t = await runTraining(ctx, init, pilot.chosen_bandwidth as number);
        dir.writeJson(dir.path('training.json'), { bandwidth: t.bandwidth, first_update_check: t.first_update_check, arms: Object.fromEntries(Object.entries(t.arms).map(([k, v]) => [k, dir.relative(dir.trainingFile(v.arm))])) });
        return t;
      },
      () => loadTraining(dir, run.spec),
    );
    const evaluation = await phase('evaluation', () => runEvaluation(ctx, init, training), () => readRunFile(dir, 'evaluation.json'));
    await phase('decision', async () => runDecision(ctx, evaluation), () => readRunFile(dir, 'decision-summary.json'));
    outcome = 'complete';
  } catch (err) {
    if (err instanceof RunStopped) {
      outcome = 'stopped';
      message = err.message;
      progress.info(`run stopped: ${err.message}`);
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
  if (outcome !== 'interrupted') {
    const started = Date.now();
    const draft = () => buildRecord({ dir, manifest: run.manifest, state: state.state, spec: run.spec, sourceSpec: run.sourceSpec, cpus: cpus().length });
    record = draft();
    dir.writeJson(dir.recordFile, record);
    state.addWall('record', (Date.now() - started) / 1000);
    state.complete('record');
    record = draft(); // with the record phase's own wall time
    dir.writeJson(dir.recordFile, record);
    progress.info(`record: ${dir.recordFile}`);
    progress.info(`verdict: ${record.verdict.outcome}: ${record.verdict.reasoning[0]}`);
    if (outcome === 'complete') for (const line of exportAndCheck(dir.root)) progress.info(`exchange record: ${line}`);
  }
  await closing;
  // a finished run leaves nothing in a shared Redis under the prefix it owned (its services were its own)
  if (infra && opts.services === 'spawn' && !infra.redis.private && (outcome === 'complete' || outcome === 'stopped')) {
    await deletePrefixKeys(infra.redis.url, infra.prefix).catch(() => 0);
  }
  progress.close();
  return { dir: dir.root, status: outcome, record, message };
}

function loadTraining(dir: RunDir, spec: ExperimentSpec): TrainingResult {
  const summary = readRunFile(dir, 'training.json');
  const arms = Object.fromEntries(spec.arms.map((a) => [a.name, readRunFile(dir, '<arm>/training.json', dir.trainingFile(a.name))]));
  return { bandwidth: summary.bandwidth as number, arms, first_update_check: summary.first_update_check as TrainingResult['first_update_check'] };
}

