// rx run end to end on the real Redis, the four pipeline services as real child processes (started once, used
// as external services by each run), the pipeline's deterministic hash-chain test policy in every process and
// "What is a + b?" problems it can answer. Reduced by a spec override: 2 steps, 16 eval items.
//   1. a whole run: every file of the run directory exists and agrees (decision recomputed from the eval files,
//      the same numbers as `rx decide`, gate metrics recomputed from the pilot's step logs, hashes)
//   2. a run interrupted after its pilot, and one interrupted mid-training (then the trainer restarted), resumed:
//      the same results as the uninterrupted run (the second continues each arm at the step the trainer reached)
//   3. the pilot fails kernel_effective_neighbors_p10 at 0.5 and at 1.0: calibration ran, failed logs kept, no arm trained
//   4. the pilot fails it at 0.5 only: the calibration chooses 1.0, the failed logs are kept beside it, the arms train
// The gates are the spec's (the hash-chain policy's rewards and prompt logprobs both follow each prompt's ease, so
// baseline_reward_corr has signal); the calibration tests raise only the effective-neighbours gate's minimum.
import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import type { StepRecord } from '@rx/contracts';
import { arithmeticProblems } from '@rx/pipeline/testing';
import { createRedisHarness } from '@rx/queue/testing';
import { HashChainPolicyBackend } from '@rx/backend/testing';
import { parseControllerConfig } from '../config';
import type { ExperimentData } from '../experiment/experiment-data';
import { runExperiment } from '../experiment/run-experiment';
import type { RunOutcome } from '../composition/run-options';
import { freePort, ServiceSupervisor } from '@rx/local-stack';
import { REPO_ROOT } from '../infra/repo-root';
import { NullProgress } from '../progress/progress.reporter';
import { sha256Json } from '@rx/run-dir';
import { readRunFile, RunDir } from '@rx/run-dir';
import { checkCompletedRun, cli, jsonLines as lines } from './run-directory.check';
import { hashChainEntry } from '@rx/local-stack/testing';

jest.setTimeout(90_000);

const harness = createRedisHarness('controller-e2e');
const logsDir = mkdtempSync(path.join(tmpdir(), 'rx-ctl-e2e-logs-'));
const supervisors: Record<string, ServiceSupervisor> = {};
let serviceEnv: Record<string, string>;
let work: string;

async function startService(name: string): Promise<void> {
  supervisors[name] = new ServiceSupervisor({ logsDir });
  await supervisors[name].start([{ name, port: await freePort(), env: serviceEnv, entry: hashChainEntry(name) }]);
}

const STEPS = 2;
const N_EVAL = 16;
const problems = arithmeticProblems(STEPS * 64 + N_EVAL).map((p) => ({ id: p.promptId, question: p.question, answer: p.answer }));
const data: ExperimentData = {
  train: problems.slice(0, STEPS * 64),
  test: problems.slice(STEPS * 64),
  dev: [],
  source: 'arithmeticProblems test fixture',
  trainManifestSha256: sha256Json(problems.slice(0, STEPS * 64)),
  testManifestSha256: sha256Json(problems.slice(STEPS * 64)),
};

function override(essMin?: number): string {
  const file = path.join(work, `override-${essMin ?? 'spec'}.json`);
  const checks: Array<{ metric: string; min: number }> = [];
  if (essMin !== undefined) checks.push({ metric: 'kernel_effective_neighbors_p10', min: essMin });
  writeFileSync(
    file,
    JSON.stringify({ steps: STEPS, dataset: { n_examples: STEPS * 64 }, eval: { n_examples: N_EVAL }, feasibility: { effective_config: { steps: STEPS, n_eval: N_EVAL } }, activation_gate: { checks } }),
  );
  return file;
}

const config = () => parseControllerConfig({ REDIS_URL: harness.url, RX_BACKEND_URL: 'memory://hash-chain', RX_QUEUE_PREFIX: harness.prefix, RX_CONCURRENCY: '16' });

function run(out: string, extra: { overridePath?: string; resume?: boolean; interruptAfter?: 'pilot'; interruptAfterTrainingStep?: number } = {}): Promise<RunOutcome> {
  return runExperiment({
    ...(extra.resume ? { resumeDir: out } : { specPath: path.join(REPO_ROOT, 'specs', 'embedded.json'), outDir: out, overridePath: extra.overridePath }),
    services: 'external',
    backendFor: () => new HashChainPolicyBackend(),
    config: config(),
    progress: new NullProgress(),
    signal: new AbortController().signal,
    httpPort: null,
    data,
    stepStallTimeoutMs: 30_000,
    interruptAfter: extra.interruptAfter,
    interruptAfterTrainingStep: extra.interruptAfterTrainingStep,
  });
}

beforeAll(async () => {
  work = mkdtempSync(path.join(tmpdir(), 'rx-ctl-e2e-'));
  // the test Redis of this machine has no password: the services accept it as a development one
  serviceEnv = { REDIS_URL: harness.url, RX_BACKEND_URL: 'memory://hash-chain', RX_QUEUE_PREFIX: harness.prefix, RX_DATA_DIR: path.join(work, 'services'), RX_ALLOW_INSECURE_REDIS: '1' };
  await Promise.all(['sampler', 'grader', 'advantage', 'trainer'].map(startService));
});

afterAll(async () => {
  await Promise.all(Object.values(supervisors).map((s) => s.stop()));
  await harness.close();
  if (process.env.RX_KEEP_E2E) return console.warn(`kept ${work} and ${logsDir}`);
  rmSync(work, { recursive: true, force: true });
  rmSync(logsDir, { recursive: true, force: true });
});

describe('rx run on the services (hash-chain test policy)', () => {
  let whole: RunOutcome;

  it('runs every phase and writes a run directory whose files agree', async () => {
    const out = path.join(work, 'whole');
    whole = await run(out, { overridePath: override() });
    expect([whole.status, whole.message]).toEqual(['complete', null]);
    const { record, spec } = checkCompletedRun(out, data.test.map((p) => p.id));
    expect(spec.steps).toBe(STEPS);
    expect(existsSync(path.join(out, 'spec.source.json'))).toBe(true);
    // the spec's gates: at 0.5 the fixture's few prompt lengths leave too few effective neighbours (p10 < 8), so the
    // pre-registered calibration runs and 1.0 passes, as on the embedded model
    const pilots = record.gates!.pilots.map((p) => [p.bandwidth, p.report.pass, p.report.results.filter((g) => !g.pass).map((g) => g.metric)]);
    expect(pilots).toEqual([
      [0.5, false, ['kernel_effective_neighbors_p10']],
      [1, true, []],
    ]);
    expect(record.gates?.chosen_bandwidth).toBe(1);
    expect(record.feasibility.projections.map((p) => p.label)).toEqual(['this run', 'the pre-registered spec']);
    // the final weights: the state the trainer saved with the last step, loaded and saved for sampling
    const last = record.training!.arms.gs1_kernel.checkpoints[STEPS - 1];
    expect(record.training!.arms.gs1_kernel.final.state_path).toBe(last.state_path);
    expect(last.state_path).toMatch(/^memory:\/\/hash-chain-state\//);
    // rx status reads it back
    const status = cli(['status', out]);
    expect(status.stdout).toMatch(/status: complete/);
    expect(status.stdout).toMatch(/decision: (supported|inconclusive|refuted)/);
  });

  it('resumes a run interrupted after its pilot with identical results', async () => {
    const out = path.join(work, 'resumed');
    const first = await run(out, { overridePath: override(), interruptAfter: 'pilot' });
    expect(first.status).toBe('interrupted');
    const dir = new RunDir(out);
    expect(existsSync(dir.stepsFile('gs1_kernel'))).toBe(false);
    const pilotBefore = readRunFile(dir, 'pilot.json');
    const again = await run(out, { resume: true });
    expect(again.status).toBe('complete');
    const a = whole.record!;
    const b = again.record!;
    expect(b.attempts.map((x) => [x.resumed, x.outcome])).toEqual([[false, 'interrupted'], [true, 'complete']]);
    // the pilot was not run again; the same decision from the same per-item results
    expect(b.gates?.pilots.map((p) => p.run_id)).toEqual(pilotBefore.pilots.map((p) => p.run_id));
    for (const model of ['base', 'grpo_gs8', 'gs1_kernel']) expect(b.evaluation!.models[model].sha256).toBe(a.evaluation!.models[model].sha256);
    expect({ ...b.decision, reproduce: '' }).toEqual({ ...a.decision, reproduce: '' });
    const steps = (d: RunDir, arm: string) => lines<StepRecord>(d.stepsFile(arm)).map((r) => r.rollouts.map((x) => [x.reward, x.advantage]));
    for (const arm of ['grpo_gs8', 'gs1_kernel']) expect(steps(dir, arm)).toEqual(steps(new RunDir(whole.dir), arm));
  });

  it('resumes a run interrupted mid-training at the step the trainer reached, after a trainer restart, with identical results', async () => {
    const out = path.join(work, 'mid-training');
    const first = await run(out, { overridePath: override(), interruptAfterTrainingStep: 0 });
    expect(first.status).toBe('interrupted');
    const dir = new RunDir(out);
    const logged = ['grpo_gs8', 'gs1_kernel'].map((arm) => lines<StepRecord>(dir.stepsFile(arm)).length);
    expect(Math.min(...logged)).toBeLessThan(STEPS);
    // the trainer goes away with the arms' clients; the new one rebuilds them from the states in its ledger
    await supervisors.trainer.stop();
    await startService('trainer');
    const again = await run(out, { resume: true });
    expect(again.status).toBe('complete');
    // both arms continued from their last committed step: no arm trained again from the start
    const state = readRunFile(dir, 'state.json');
    expect(Object.values(state.arms).map((a) => a.attempt)).toEqual([1, 1]);
    const steps = (d: RunDir, arm: string) => lines<StepRecord>(d.stepsFile(arm)).map((r) => [r.step, r.samplerPath, r.loss, r.rollouts.map((x) => [x.reward, x.advantage])]);
    for (const arm of ['grpo_gs8', 'gs1_kernel']) expect([arm, steps(dir, arm)]).toEqual([arm, steps(new RunDir(whole.dir), arm)]);
    // metrics.jsonl and transcripts.jsonl follow the resumed records: one line per step, no step twice
    const untimed = (d: RunDir, arm: string) => lines<Record<string, number>>(path.join(d.armDir(arm), 'metrics.jsonl')).map((m) => Object.fromEntries(Object.entries(m).filter(([k]) => !k.startsWith('time/'))));
    const transcripts = (d: RunDir, arm: string) => lines<unknown>(path.join(d.armDir(arm), 'transcripts.jsonl'));
    for (const arm of ['grpo_gs8', 'gs1_kernel']) {
      expect([arm, untimed(dir, arm)]).toEqual([arm, untimed(new RunDir(whole.dir), arm)]);
      expect([arm, transcripts(dir, arm)]).toEqual([arm, transcripts(new RunDir(whole.dir), arm)]);
    }
    for (const model of ['base', 'grpo_gs8', 'gs1_kernel']) expect(again.record!.evaluation!.models[model].sha256).toBe(whole.record!.evaluation!.models[model].sha256);
  });

  let ess: { at05: number; at10: number };

  it('stops before any training when the effective-neighbours gate fails at 0.5 and after the calibration at 1.0', async () => {
    const out = path.join(work, 'gate-fails');
    const r = await run(out, { overridePath: override(1e9) });
    expect(r.status).toBe('stopped');
    const dir = new RunDir(out);
    const pilot = readRunFile(dir, 'pilot.json');
    expect(pilot.pass).toBe(false);
    expect(pilot.chosen_bandwidth).toBeNull();
    expect(pilot.calibration?.ran).toBe(true);
    expect(pilot.pilots.map((p) => [p.bandwidth, p.report.failed])).toEqual([
      [0.5, ['kernel_effective_neighbors_p10']],
      [1, ['kernel_effective_neighbors_p10']],
    ]);
    // the failed pilot's logs are kept beside the calibration's
    expect(readdirSync(out).filter((f) => f.startsWith('pilot_')).sort()).toEqual(['pilot_bw0.5_FAILED_ess', 'pilot_bw1.0']);
    expect(lines(dir.path('pilot_bw0.5_FAILED_ess', 'gs1_kernel', 'steps.jsonl'))).toHaveLength(2);
    expect(lines(dir.path('pilot_bw1.0', 'gs1_kernel', 'steps.jsonl'))).toHaveLength(2);
    // no arm was trained, nothing was evaluated, and the record says which gate failed and by how much
    for (const arm of ['grpo_gs8', 'gs1_kernel']) expect(existsSync(dir.armDir(arm))).toBe(false);
    expect(existsSync(dir.evaluationFile)).toBe(false);
    const record = readRunFile(dir, 'record.json');
    expect(record.training).toBeNull();
    expect(record.decision).toBeNull();
    expect(record.verdict.outcome).toBe('stopped');
    const text = record.verdict.reasoning.join('\n');
    expect(text).toMatch(/kernel_effective_neighbors_p10 at bandwidth 1: .*short by \d/);
    expect(text).toMatch(/No arm was trained/);
    ess = { at05: pilot.pilots[0].metrics.kernel_effective_neighbors_p10 as number, at10: pilot.pilots[1].metrics.kernel_effective_neighbors_p10 as number };
    // a wider kernel spreads the weight over more neighbours
    expect(ess.at10).toBeGreaterThan(ess.at05);
  });

  it('calibrates to 1.0 when the gate fails at 0.5 only, keeps the failed logs, and trains both arms at 1.0', async () => {
    const out = path.join(work, 'calibrated');
    // a bound between the two measured values (the same prompts and seeds give the same values)
    const r = await run(out, { overridePath: override((ess.at05 + ess.at10) / 2) });
    expect([r.status, r.message]).toEqual(['complete', null]);
    const dir = new RunDir(out);
    const pilot = readRunFile(dir, 'pilot.json');
    expect(pilot.pilots.map((p) => [p.bandwidth, p.report.pass])).toEqual([
      [0.5, false],
      [1, true],
    ]);
    expect(pilot.chosen_bandwidth).toBe(1);
    expect(pilot.failed_logs).toEqual(['pilot_bw0.5_FAILED_ess']);
    expect(pilot.pilots[1].baseline_from).toBe('pilot_bw0.5_FAILED_ess');
    const kernelSteps = lines<StepRecord>(dir.stepsFile('gs1_kernel'));
    expect(kernelSteps).toHaveLength(STEPS);
    expect(r.record?.training?.bandwidth).toBe(1);
    expect(r.record?.training?.arms.gs1_kernel.bandwidth).toBe(1);
  });
});
