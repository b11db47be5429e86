// rx run end to end on the real Redis, the four pipeline services as real child processes (started once, used
// as external services by each run), the pipeline's deterministic hash-chain test policy in every process and
// "What is a + b?" problems it can answer. Reduced by a spec override: 2 steps, 16 eval items.
//   1. a whole run: every file of the run directory exists and agrees (decision recomputed from the eval files,
//      the same numbers as `rx decide`, gate metrics recomputed from the pilot's step logs, hashes)
//   2. a run interrupted after its pilot, and one interrupted mid-training, then resumed: the same results as the
//      uninterrupted run (the second continues each arm at the step the trainer reached)
//   3. the pilot fails kernel_effective_neighbors_p10 at 0.5 and at 1.0: calibration ran, failed logs kept, no arm trained
//   4. the pilot fails it at 0.5 only: the calibration chooses 1.0, the failed logs are kept beside it, the arms train
// The test spec sets baseline_reward_corr's min to -1: the hash-chain policy's rewards do not depend on the prompt,
// so that gate would stop every run here; the calibration tests isolate the effective-neighbours gate.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { stepRecordSchema, type StepRecord } from '@rx/contracts';
import { evaluateGates, gateMetrics } from '@rx/gates';
import { arithmeticProblems, createRedisHarness, HASH_CHAIN_BACKEND_URL } from '@rx/pipeline';
import { decisionRule, loadSpecText, type ExperimentSpec } from '@rx/spec';
import { decidePairedItems, hoeffdingRecord } from '@rx/stats';
import { parseControllerConfig } from '../config';
import { loggedBatch } from '../experiment/arm-driver';
import type { ExperimentData } from '../experiment/experiment-data';
import { runExperiment, type RunOutcome } from '../experiment/run-experiment';
import { freePort } from '../infra/free-port';
import { REPO_ROOT } from '../infra/repo-root';
import { ServiceSupervisor } from '../infra/service-supervisor';
import type { PilotResult } from '../phases/pilot.phase';
import type { RunRecord } from '../phases/record/record.phase';
import { NullProgress } from '../progress/progress.reporter';
import { sha256Hex, sha256Json } from '../run/canonical-json';
import { RunDir } from '../run/run-dir';

jest.setTimeout(90_000);

const harness = createRedisHarness('controller-e2e');
const supervisor = new ServiceSupervisor({ logsDir: mkdtempSync(path.join(tmpdir(), 'rx-ctl-e2e-logs-')) });
let work: string;

const STEPS = 2;
const N_EVAL = 16;
const problems = arithmeticProblems(STEPS * 64 + N_EVAL).map((p) => ({ id: p.promptId, question: p.question, answer: p.answer }));
const data: ExperimentData = {
  train: problems.slice(0, STEPS * 64),
  test: problems.slice(STEPS * 64),
  source: 'arithmeticProblems test fixture',
  trainManifestSha256: sha256Json(problems.slice(0, STEPS * 64)),
  testManifestSha256: sha256Json(problems.slice(STEPS * 64)),
};

function override(essMin?: number): string {
  const file = path.join(work, `override-${essMin ?? 'spec'}.json`);
  const checks: Array<{ metric: string; min: number }> = [{ metric: 'baseline_reward_corr', min: -1 }];
  if (essMin !== undefined) checks.push({ metric: 'kernel_effective_neighbors_p10', min: essMin });
  writeFileSync(
    file,
    JSON.stringify({ steps: STEPS, dataset: { n_examples: STEPS * 64 }, eval: { n_examples: N_EVAL }, feasibility: { effective_config: { steps: STEPS, n_eval: N_EVAL } }, activation_gate: { checks } }),
  );
  return file;
}

const config = () => parseControllerConfig({ REDIS_URL: harness.url, RX_BACKEND_URL: HASH_CHAIN_BACKEND_URL, RX_QUEUE_PREFIX: harness.prefix, RX_CONCURRENCY: '16' });

function run(out: string, extra: { overridePath?: string; resume?: boolean; interruptAfter?: 'pilot'; interruptAfterTrainingStep?: number } = {}): Promise<RunOutcome> {
  return runExperiment({
    ...(extra.resume ? { resumeDir: out } : { specPath: path.join(REPO_ROOT, 'specs', 'embedded.json'), outDir: out, overridePath: extra.overridePath }),
    services: 'external',
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

const lines = <T>(file: string): T[] =>
  readFileSync(file, 'utf8')
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l) as T);

beforeAll(async () => {
  work = mkdtempSync(path.join(tmpdir(), 'rx-ctl-e2e-'));
  const env = { REDIS_URL: harness.url, RX_BACKEND_URL: HASH_CHAIN_BACKEND_URL, RX_QUEUE_PREFIX: harness.prefix, RX_DATA_DIR: path.join(work, 'services') };
  const names = ['sampler', 'grader', 'advantage', 'trainer'];
  await supervisor.start(await Promise.all(names.map(async (name) => ({ name, port: await freePort(), env }))));
});

afterAll(async () => {
  await supervisor.stop();
  await harness.close();
  rmSync(work, { recursive: true, force: true });
});

describe('rx run on the services (hash-chain test policy)', () => {
  let whole: RunOutcome;

  it('runs every phase and writes a run directory whose files agree', async () => {
    const out = path.join(work, 'whole');
    whole = await run(out, { overridePath: override() });
    expect([whole.status, whole.message]).toEqual(['complete', null]);
    const dir = new RunDir(out);
    const spec = (loadSpecText(readFileSync(dir.specFile, 'utf8')) as { ok: true; spec: ExperimentSpec }).spec;
    expect(spec.steps).toBe(STEPS);
    for (const f of ['run.json', 'spec.json', 'spec.source.json', 'state.json', 'effective-config.json', 'preflight.json', 'shared-init.json', 'pilot.json', 'training.json', 'evaluation.json', 'decision-summary.json', 'record.json']) {
      expect([f, existsSync(dir.path(f))]).toEqual([f, true]);
    }
    const record = dir.readJson<RunRecord>(dir.recordFile);
    expect(record.status).toBe('complete');

    // preflight: the four tolerance checks with their numbers, and the probes
    expect(record.correctness_preflight?.pass).toBe(true);
    const b = record.correctness_preflight!.baseline_path[0];
    for (const k of ['baseline_loss', 'baseline_gradient', 'reference_loss', 'reference_gradient'] as const) expect(Object.keys(b[k])).toEqual(expect.arrayContaining(['max_abs_error', 'relative_l2_error', 'cosine', 'pass']));
    expect(b.fixed_batch_sha256).toMatch(/^[0-9a-f]{64}$/);
    expect(record.correctness_preflight!.probe.map((p) => [p.arm, p.finite])).toEqual([['grpo_gs8', true], ['gs1_kernel', true]]);

    // shared initialisation: one state, the same outputs for both arms before and at their first update
    expect(record.shared_initialisation?.identical).toBe(true);
    expect((record.training?.first_update_check as { identical: boolean }).identical).toBe(true);

    // pilot: 2 treatment steps and 1 baseline step logged; the gate metrics recomputed from those logs
    const pilot = dir.readJson<PilotResult>(dir.pilotFile);
    expect(pilot.chosen_bandwidth).toBe(0.5);
    const tSteps = lines<StepRecord>(dir.path('pilot_bw0.5', 'gs1_kernel', 'steps.jsonl'));
    const bSteps = lines<StepRecord>(dir.path('pilot_bw0.5', 'grpo_gs8', 'steps.jsonl'));
    expect([tSteps.length, bSteps.length]).toEqual([2, 1]);
    const heldout = lines<{ promptId: string; rewards: number[] }>(dir.path('pilot_bw0.5', 'heldout.jsonl'));
    expect(heldout).toHaveLength(64);
    expect(heldout.every((h) => h.rewards.length === 8)).toBe(true);
    const metrics = gateMetrics({ batches: [...tSteps, ...bSteps].map(loggedBatch), treatmentArm: 'gs1_kernel', baselineArm: 'grpo_gs8', heldout, pilotSteps: 2 });
    expect(pilot.pilots[0].metrics).toEqual(JSON.parse(JSON.stringify(metrics)));
    expect(pilot.pilots[0].report).toEqual(JSON.parse(JSON.stringify(evaluateGates(spec, metrics))));

    // training: steps.jsonl of each arm, one valid StepRecord per step, and the checkpoints recorded from them
    for (const arm of ['grpo_gs8', 'gs1_kernel']) {
      const steps = lines<unknown>(dir.stepsFile(arm)).map((l) => stepRecordSchema.parse(l));
      expect(steps.map((s) => s.step)).toEqual([0, 1]);
      const t = record.training!.arms[arm];
      expect(t.checkpoints.map((c) => c.sampler_path)).toEqual(steps.map((s) => s.samplerPath));
      expect(t.final.sampler_path).toMatch(/^memory:\/\/hash-chain\//);
      expect(t.final.sampler_path).not.toBe(steps[steps.length - 1].samplerPath);
    }

    // evaluation: one line per test item for base and both arms; the evaluator id is the hash of its parts
    for (const model of ['base', 'grpo_gs8', 'gs1_kernel']) {
      const ev = lines<{ item_id: string; correct: boolean; extracted: string | null; completion: string }>(dir.evalFile(model));
      expect(ev.map((l) => l.item_id)).toEqual(data.test.map((p) => p.id));
      expect(record.evaluation!.models[model].sha256).toBe(sha256Hex(readFileSync(dir.evalFile(model))));
      expect(record.evaluation!.models[model].accuracy).toBe(ev.filter((l) => l.correct).length / N_EVAL);
    }
    expect(record.evaluation!.evaluator_id).toBe(sha256Json(record.evaluation!.evaluator));

    // decision: recomputed from the eval files, and what `rx decide` prints for them
    const recomputed = hoeffdingRecord(
      decidePairedItems({ source: 't', text: readFileSync(dir.evalFile('gs1_kernel'), 'utf8') }, { source: 'b', text: readFileSync(dir.evalFile('grpo_gs8'), 'utf8') }, decisionRule(spec)),
    );
    expect(record.decision).toMatchObject(recomputed);
    const cli = spawnSync(process.execPath, ['-r', './tools/register.js', 'apps/cli/src/main.ts', 'decide', '--spec', dir.specFile, '--treatment', dir.evalFile('gs1_kernel'), '--baseline', dir.evalFile('grpo_gs8')], { cwd: REPO_ROOT, encoding: 'utf8' });
    expect(cli.status).toBe(0);
    expect(JSON.parse(cli.stdout)).toEqual(recomputed);
    expect(record.verdict.outcome).toBe(recomputed.outcome);

    // the record: code revision, observations, wall time per phase, feasibility
    const main = readFileSync(path.join(REPO_ROOT, 'apps/controller/src/main.ts'));
    expect(record.code_revision.files['apps/controller/src/main.ts']).toBe(sha256Hex(main));
    expect(Object.keys(record.observations.files)).toEqual(expect.arrayContaining(['gs1_kernel/eval.jsonl', 'grpo_gs8/steps.jsonl', 'pilot_bw0.5/heldout.jsonl']));
    for (const [f, h] of Object.entries(record.observations.files)) expect([f, sha256Hex(readFileSync(dir.path(f)))]).toEqual([f, h]);
    for (const p of ['setup', 'preflight', 'pilot', 'training', 'evaluation'] as const) expect(record.wall_seconds.by_category[p]).toBeGreaterThan(0);
    expect(record.feasibility.projections.map((p) => p.label)).toEqual(['this run', 'the pre-registered spec']);
    expect(record.feasibility.budget).toEqual({ max_wall_minutes: 120, gpu_hours: 2 });

    // rx status reads it back
    const status = spawnSync(process.execPath, ['-r', './tools/register.js', 'apps/cli/src/main.ts', 'status', out], { cwd: REPO_ROOT, encoding: 'utf8' });
    expect(status.stdout).toMatch(/status: complete/);
    expect(status.stdout).toMatch(/decision: (supported|inconclusive|refuted)/);
  });

  it('resumes a run interrupted after its pilot with identical results', async () => {
    const out = path.join(work, 'resumed');
    const first = await run(out, { overridePath: override(), interruptAfter: 'pilot' });
    expect(first.status).toBe('interrupted');
    const dir = new RunDir(out);
    expect(existsSync(dir.stepsFile('gs1_kernel'))).toBe(false);
    const pilotBefore = dir.readJson<PilotResult>(dir.pilotFile);
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

  it('resumes a run interrupted mid-training at the step the trainer reached, with identical results', async () => {
    const out = path.join(work, 'mid-training');
    const first = await run(out, { overridePath: override(), interruptAfterTrainingStep: 0 });
    expect(first.status).toBe('interrupted');
    const dir = new RunDir(out);
    const logged = ['grpo_gs8', 'gs1_kernel'].map((arm) => lines<StepRecord>(dir.stepsFile(arm)).length);
    expect(Math.min(...logged)).toBeLessThan(STEPS);
    const again = await run(out, { resume: true });
    expect(again.status).toBe('complete');
    // the trainer (still running) held both arms: they continued, no arm trained again from the start
    const state = dir.readJson<{ arms: Record<string, { attempt: number }> }>(dir.stateFile);
    expect(Object.values(state.arms).map((a) => a.attempt)).toEqual([1, 1]);
    const steps = (d: RunDir, arm: string) => lines<StepRecord>(d.stepsFile(arm)).map((r) => [r.step, r.rollouts.map((x) => [x.reward, x.advantage])]);
    for (const arm of ['grpo_gs8', 'gs1_kernel']) expect(steps(dir, arm)).toEqual(steps(new RunDir(whole.dir), arm));
    for (const model of ['base', 'grpo_gs8', 'gs1_kernel']) expect(again.record!.evaluation!.models[model].sha256).toBe(whole.record!.evaluation!.models[model].sha256);
  });

  let ess: { at05: number; at10: number };

  it('stops before any training when the effective-neighbours gate fails at 0.5 and after the calibration at 1.0', async () => {
    const out = path.join(work, 'gate-fails');
    const r = await run(out, { overridePath: override(1e9) });
    expect(r.status).toBe('stopped');
    const dir = new RunDir(out);
    const pilot = dir.readJson<PilotResult>(dir.pilotFile);
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
    const record = dir.readJson<RunRecord>(dir.recordFile);
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
    const pilot = dir.readJson<PilotResult>(dir.pilotFile);
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
