// The real controller under chaos: `rx run` itself (apps/cli, --services external) on a stack of its own with the
// embedded model (the whole experiment: preflight, pilot and gates, both arms, evaluation, decision), SIGKILLed at
// points drawn from the seed and restarted each time with `rx run --resume <dir>` as a supervisor (a Kubernetes
// Job's restart) would; the run it finishes must be identical to a clean `rx run` of the same spec on the same
// stack: every step record of both arms, the pilot's gate metrics, the final weights (logprobs of fixed probes
// under each arm's final sampler weights), every eval file and the decision; each arm exactly `steps` optimizer
// steps on the backend's side. Every file written is grepped for the API key and the Redis password.
import { createHash, randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { TinkerBackend, rendererFor } from '@rx/backend';
import { arithDataset } from '@rx/datasets';
import { loadSpecText, type ExperimentSpec } from '@rx/spec';
import { PHASES, readRunFile, readRunFileIfExists, readRunLines, RunDir } from '@rx/run-dir';
import { backendOptimizerSteps } from './backend-steps';
import { weightsFingerprint } from './chaos-controller';
import { ChaosStack } from './chaos-stack';
import { seededRandom } from './fault-plan';
import { comparableRecord, firstDifference } from './run-comparison';
import { scanForSecrets } from './secret-scan';
import { launch, REPO_ROOT, type ManagedProcess } from './service-process';
import { formatSpawnedKills, runSpawnedKills, type SpawnedKillsOptions, type SpawnedKillsReport } from './spawned-controller-kills';

export interface ControllerResumeOptions {
  seed: number;
  /** SIGKILLs of the controller in the faulted run (each followed by `rx run --resume`) */
  kills: number;
  steps: number;
  evalItems: number;
  dir: string;
  baseCheckpoint: string;
  /** also rx run with its own services and Redis, its controller and Redis SIGKILLed (spawned-controller-kills.ts) */
  spawnedKills?: boolean;
  log: (line: string) => void;
}

export interface ControllerKill {
  /** seconds after the (re)start the kill was drawn for */
  afterSeconds: number;
  /** the phase the run was in when it was killed (from its state.json); null: the run had finished first */
  phase: string | null;
  recovered: boolean;
}

export interface ControllerResumeReport {
  seed: number;
  cleanSeconds: number;
  faultedSeconds: number;
  kills: ControllerKill[];
  error: string | null;
  problems: string[];
  differences: string[];
  secrets: { files: number; hits: Array<{ file: string; label: string }> };
  /** the spawned run's kills, against the same clean run */
  spawned: SpawnedKillsReport | null;
  ok: boolean;
}

interface RunDirFacts {
  records: Record<string, Array<ReturnType<typeof comparableRecord>>>;
  finalStatePaths: Record<string, string>;
  finalSamplerPaths: Record<string, string>;
  gates: unknown;
  evalSha256: Record<string, string>;
  decision: unknown;
  verdict: unknown;
}

const sha256 = (b: Buffer | string): string => createHash('sha256').update(b).digest('hex');
/** what a completed run directory says, read through the run-directory contract (@rx/run-dir), for comparing two runs */
function runDirFacts(root: string, spec: ExperimentSpec): RunDirFacts {
  const dir = new RunDir(root);
  const state = readRunFile(dir, 'state.json');
  const facts: RunDirFacts = { records: {}, finalStatePaths: {}, finalSamplerPaths: {}, gates: null, evalSha256: {}, decision: null, verdict: null };
  for (const arm of spec.arms.map((a) => a.name)) {
    // the arm's last attempt only (a resumed arm may have restarted its attempt)
    facts.records[arm] = readRunLines(dir, '<arm>/steps.jsonl', dir.stepsFile(arm)).filter((r) => r.runId === state.arms[arm]?.runId).map(comparableRecord);
    const training = readRunFile(dir, '<arm>/training.json', dir.trainingFile(arm));
    facts.finalStatePaths[arm] = training.final.state_path;
    facts.finalSamplerPaths[arm] = training.final.sampler_path;
  }
  for (const model of ['base', ...spec.arms.map((a) => a.name)]) facts.evalSha256[model] = sha256(readFileSync(dir.evalFile(model)));
  const pilot = readRunFile(dir, 'pilot.json');
  facts.gates = { chosen_bandwidth: pilot.chosen_bandwidth, pilots: pilot.pilots.map((p) => ({ bandwidth: p.bandwidth, metrics: p.metrics, pass: p.report.pass })) };
  const { n, effect, lower, upper, outcome } = readRunFile(dir, 'decision-summary.json');
  facts.decision = { n, effect, lower, upper, outcome };
  facts.verdict = readRunFile(dir, 'record.json').verdict.outcome;
  return facts;
}

/** the phase a run directory is in: the first of its phases not completed (null when the run is complete) */
function currentPhase(root: string): string | null {
  const state = readRunFileIfExists(new RunDir(root), 'state.json');
  if (!state) return 'setup';
  if (state.status === 'complete') return null;
  return PHASES.find((p) => !state.completed.includes(p)) ?? 'record';
}

export async function runControllerResume(o: ControllerResumeOptions): Promise<ControllerResumeReport> {
  mkdirSync(o.dir, { recursive: true });
  const apiKey = `rx-fake-key-${randomBytes(12).toString('hex')}`;
  const redisPassword = `rx-fake-pw-${randomBytes(12).toString('hex')}`;
  const rand = seededRandom(o.seed ^ 0x5eed);
  const specFile = path.join(REPO_ROOT, 'specs', 'embedded.json');
  const override = path.join(o.dir, 'override.json');
  writeFileSync(
    override,
    JSON.stringify({ steps: o.steps, dataset: { n_examples: Math.max(128, o.steps * 64) }, eval: { n_examples: o.evalItems }, feasibility: { effective_config: { steps: o.steps, n_eval: o.evalItems } } }),
  );
  o.log(`controller chaos: seed ${o.seed}, rx run (embedded model, ${o.steps} steps, ${o.evalItems} eval items) killed ${o.kills} time(s) and resumed; work in ${o.dir}`);
  const stack = await ChaosStack.start({ dir: path.join(o.dir, 'stack'), model: 'embedded', baseCheckpoint: o.baseCheckpoint, apiKey, redisPassword, prefix: `ctl-${o.seed}` });
  const env = { ...stack.serviceEnv(), RX_CONCURRENCY: '16' };
  delete (env as Record<string, string>).PORT;
  let n = 0;
  const rxRun = (args: string[]): Promise<ManagedProcess> =>
    launch({ name: 'rx-run', entry: 'apps/cli/src/main.ts', args, env, logFile: path.join(stack.logsDir, `rx-run-${++n}.log`), waitReady: false });
  const runArgs = (out: string) => ['run', '--spec', specFile, '--override', override, '--out', out, '--services', 'external', '--port', 'off'];
  const kills: ControllerKill[] = [];
  const report: ControllerResumeReport = { seed: o.seed, cleanSeconds: 0, faultedSeconds: 0, kills, error: null, problems: [], differences: [], secrets: { files: 0, hits: [] }, spawned: null, ok: false };
  try {
    const cleanDir = path.join(o.dir, 'clean');
    let t0 = Date.now();
    const clean = await rxRun(runArgs(cleanDir));
    const cleanExit = await clean.exited;
    report.cleanSeconds = (Date.now() - t0) / 1000;
    if (cleanExit.code !== 0) throw new Error(`the clean rx run exited ${cleanExit.code ?? cleanExit.signal}: ${clean.tail(600)}`);
    o.log(`  clean rx run: complete in ${report.cleanSeconds.toFixed(1)} s`);

    const faultedDir = path.join(o.dir, 'faulted');
    t0 = Date.now();
    let proc = await rxRun(runArgs(faultedDir));
    // the first kill somewhere in 10-60 % of what a clean run takes; each later one in 10-60 % of what is left of
    // it after the previous kill (a resumed run skips the phases done), plus the CLI's start-up
    let left = report.cleanSeconds;
    for (let k = 0; k < o.kills; k++) {
      const afterSeconds = Math.round(((k === 0 ? 0 : 1.5) + (0.1 + 0.5 * rand()) * left) * 10) / 10;
      const fired = await Promise.race([proc.exited.then(() => false), new Promise<boolean>((r) => setTimeout(() => r(true), afterSeconds * 1000))]);
      if (!fired) {
        kills.push({ afterSeconds, phase: null, recovered: false });
        break;
      }
      const phase = currentPhase(faultedDir);
      await proc.kill('SIGKILL');
      // a kill that came after the run wrote its record did not interrupt anything
      const landed = phase !== null && currentPhase(faultedDir) !== null;
      o.log(`  rx run SIGKILLed ${afterSeconds} s after its start, ${landed ? `in ${phase}` : 'after it had finished'}; rx run --resume`);
      proc = await rxRun(['run', '--resume', faultedDir, '--services', 'external', '--port', 'off']);
      kills.push({ afterSeconds, phase: landed ? phase : null, recovered: false });
      left = Math.max(1, left - afterSeconds);
    }
    const exit = await proc.exited;
    report.faultedSeconds = (Date.now() - t0) / 1000;
    if (exit.code !== 0) throw new Error(`the resumed rx run exited ${exit.code ?? exit.signal}: ${proc.tail(600)}`);
    for (const k of kills) k.recovered = true;
    o.log(`  faulted rx run: complete in ${report.faultedSeconds.toFixed(1)} s`);

    const parsed = loadSpecText(readFileSync(path.join(faultedDir, 'spec.json'), 'utf8'));
    if (!parsed.ok) throw new Error(parsed.errors[0]);
    const spec = parsed.spec;
    const a = runDirFacts(cleanDir, spec);
    const b = runDirFacts(faultedDir, spec);
    for (const key of ['records', 'gates', 'evalSha256', 'decision', 'verdict'] as const) {
      const d = firstDifference(b[key], a[key], key);
      if (d) report.differences.push(d);
    }
    const fingerprints = await finalWeights(stack, apiKey, spec, [a.finalSamplerPaths, b.finalSamplerPaths]);
    for (const arm of spec.arms.map((x) => x.name)) {
      if (fingerprints[0][arm] !== fingerprints[1][arm]) report.differences.push(`${arm}: final weights differ (logprobs of the probes under the final sampler weights)`);
      const applied = backendOptimizerSteps(b.finalStatePaths[arm], stack.policyDataDir);
      if (applied !== spec.steps) report.problems.push(`${arm}: the backend's final state holds ${applied ?? 'no'} optimizer steps, expected ${spec.steps}`);
      const ids = b.records[arm].flatMap((r) => r.rollouts.map((x) => x.rolloutId));
      if (new Set(ids).size !== ids.length) report.problems.push(`${arm}: a rollout was trained in two steps`);
      if (b.records[arm].length !== spec.steps) report.problems.push(`${arm}: ${b.records[arm].length} step records, expected ${spec.steps}`);
    }
    if (o.spawnedKills === true) {
      report.spawned = await runSpawnedKills({
        dir: path.join(o.dir, 'spawned'),
        specFile,
        override,
        logsDir: stack.logsDir,
        cleanFacts: a as unknown as Record<string, unknown>,
        factsOf: (root) => runDirFacts(root, spec) as unknown as ReturnType<SpawnedKillsOptions['factsOf']>,
        spec,
        log: o.log,
      });
    }
  } catch (err) {
    report.error = (err as Error).message;
  } finally {
    await stack.close();
  }
  const scan = scanForSecrets(o.dir, { 'the API key': apiKey, 'the Redis password': redisPassword });
  report.secrets = { files: scan.files, hits: scan.hits };
  const landed = kills.filter((k) => k.phase !== null);
  if (report.error === null && landed.length === 0) report.problems.push('no kill landed before the run finished');
  report.ok =
    report.error === null && report.problems.length === 0 && report.differences.length === 0 && landed.every((k) => k.recovered) && scan.hits.length === 0 && (report.spawned?.ok ?? o.spawnedKills !== true);
  return report;
}

/** per run, per arm: sha256 of the logprobs of fixed probe sequences under the arm's final sampler weights */
async function finalWeights(stack: ChaosStack, apiKey: string, spec: ExperimentSpec, samplerPaths: Array<Record<string, string>>): Promise<Array<Record<string, string>>> {
  const backend = new TinkerBackend({ baseUrl: stack.policyUrl, apiKey });
  try {
    const renderer = await rendererFor(spec.base_model);
    const probeItems = arithDataset({ split: 'test', seed: 0 });
    const out: Array<Record<string, string>> = [];
    for (const paths of samplerPaths) {
      const hashes: Record<string, string> = {};
      for (const [arm, p] of Object.entries(paths)) hashes[arm] = await weightsFingerprint(await backend.createSamplingClient(p), renderer, probeItems);
      out.push(hashes);
    }
    return out;
  } finally {
    await backend.close();
  }
}

export function formatControllerResume(r: ControllerResumeReport): string {
  const lines = [`controller chaos (rx run --resume), seed ${r.seed}: clean run ${r.cleanSeconds.toFixed(0)} s, faulted run ${r.faultedSeconds.toFixed(0)} s`];
  for (const k of r.kills) lines.push(`  SIGKILL of rx run ${k.afterSeconds} s after its start: ${k.phase === null ? 'the run had finished (not injected)' : `in ${k.phase}`}; ${k.recovered ? 'resumed' : 'NOT recovered'}`);
  if (r.error) lines.push(`  failed: ${r.error}`);
  for (const p of r.problems) lines.push(`  ${p}`);
  for (const d of r.differences.slice(0, 8)) lines.push(`  differs from the clean run: ${d}`);
  lines.push(`  identical to the clean run (step records, gates, final weights, eval files, decision): ${r.error === null && r.differences.length === 0 ? 'yes' : 'no'}`);
  lines.push(`  secrets in ${r.secrets.files} files: ${r.secrets.hits.length === 0 ? 'none' : r.secrets.hits.map((h) => `${h.label} in ${h.file}`).join(', ')}`);
  if (r.spawned) lines.push(formatSpawnedKills(r.spawned));
  lines.push(`  controller chaos: ${r.ok ? 'PASS' : 'FAIL'}`);
  return lines.join('\n');
}
