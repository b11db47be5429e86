// TEST HELPER. Checks that every file of a completed run directory exists and agrees with the others: the
// gate metrics recomputed from the pilot's step logs, the checkpoints from the step logs, the eval files against
// the test items and their hashes, the evaluator id from its parts, the decision recomputed from the eval files
// and what `rx decide` prints for them, the observations' hashes, the code revision, wall times and feasibility.
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import * as path from 'node:path';
import { stepMetricsLineSchema, stepRecordSchema, TRANSCRIPTS_PER_STEP, transcriptLineSchema, type StepRecord } from '@rx/contracts';
import { evaluateGates, gateMetrics } from '@rx/gates';
import { PREFLIGHT_CHECK_IDS, preflightResultSchema } from '@rx/preflight';
import { baselineArm, decisionRule, loadSpecText, treatmentArm, type ExperimentSpec } from '@rx/spec';
import { discordantItems } from '@rx/report';
import { allBoundRecords, hoeffdingRecord, pairedBound, pairItemFiles, type HoeffdingRecord } from '@rx/stats';
import { loggedBatch } from '../experiment/arm-driver';
import { REPO_ROOT } from '../infra/repo-root';
import { sha256Hex, sha256Json } from '@rx/run-dir';
import { formatBandwidth, readRunFile, readRunLines, RunDir, type RunFileName, type RunLineFileName, type RunRecord } from '@rx/run-dir';

export const RUN_FILES = ['run.json', 'spec.json', 'state.json', 'effective-config.json', 'preflight.json', 'shared-init.json', 'pilot.json', 'training.json', 'evaluation.json', 'decision-summary.json', 'record.json'] as const satisfies readonly RunFileName[];

/**
 * Every file of a completed run reads back through the run-directory contract (@rx/run-dir): each JSON file
 * against its schema, each line of each JSON-lines file against its line schema (readRunLines stops at the first
 * line that does not match, so all lines read means all lines match).
 */
export function checkRunFilesAgainstContract(dir: RunDir, spec: ExperimentSpec): void {
  for (const f of RUN_FILES) expect([f, existsSync(dir.path(f))]).toEqual([f, true]);
  for (const f of RUN_FILES) readRunFile(dir, f);
  readRunFile(dir, 'logs/endpoints.json');
  const pilot = readRunFile(dir, 'pilot.json');
  for (const p of pilot.pilots) readRunFile(dir, '<pilot>/gate-report.json', dir.gateReportFile(dir.path(p.dir)));
  const lineFiles: Array<[RunLineFileName, string]> = [];
  for (const arm of spec.arms.map((a) => a.name)) {
    readRunFile(dir, '<arm>/training.json', dir.trainingFile(arm));
    lineFiles.push(['<arm>/steps.jsonl', dir.stepsFile(arm)], ['<arm>/metrics.jsonl', dir.stepMetricsFile(arm)], ['<arm>/transcripts.jsonl', dir.transcriptsFile(arm)]);
  }
  for (const model of ['base', ...spec.arms.map((a) => a.name)]) lineFiles.push(['<model>/eval.jsonl', dir.evalFile(model)]);
  if (existsSync(dir.deadLettersFile)) lineFiles.push(['dead-letters.jsonl', dir.deadLettersFile]);
  for (const [name, file] of lineFiles) expect([dir.relative(file), readRunLines(dir, name, file).length]).toEqual([dir.relative(file), jsonLines(file).length]);
}

export function jsonLines<T>(file: string): T[] {
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l) as T);
}

export function cli(args: string[]): { status: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, ['-r', './tools/register.js', 'apps/cli/src/main.ts', ...args], { cwd: REPO_ROOT, encoding: 'utf8', env: process.env });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** an arm's metrics.jsonl (one line per step) and transcripts.jsonl (a few per step) against its steps.jsonl */
export function checkStepLogs(armDir: string, steps: readonly StepRecord[]): void {
  const metrics = jsonLines<unknown>(path.join(armDir, 'metrics.jsonl')).map((l) => stepMetricsLineSchema.strict().parse(l));
  expect(metrics.map((m) => m.step)).toEqual(steps.map((s) => s.step));
  metrics.forEach((m, i) => {
    const s = steps[i];
    // the advantage stage's batch mean, and counts taken here from the rollouts
    expect(m['env/all/reward/total']).toBeCloseTo(s.gate.rewardMean, 12);
    expect(m['env/all/correct'] * s.rollouts.length).toBeCloseTo(s.rollouts.filter((x) => x.correct).length, 9);
    expect(m['env/all/format'] * s.rollouts.length).toBeCloseTo(s.rollouts.filter((x) => x.formatOk).length, 9);
    expect(m['rx/loss_sum']).toBe(s.loss);
    expect(m['time/train']).toBe(s.timings.train);
    expect(m['optim/kl_sample_train_v2']).toBeGreaterThanOrEqual(0);
    expect(m['optim/entropy']).toBeGreaterThan(0);
    // the batch signals, counted here from the rollouts: every completion carries its stop reason, none is longer
    // than the longest, and the groups split into all good, all bad and mixed
    const n = s.rollouts.length;
    expect(s.rollouts.every((x) => x.stopReason === 'stop' || x.stopReason === 'length')).toBe(true);
    expect(m['rx/completions/clipped_ratio']! * n).toBeCloseTo(s.rollouts.filter((x) => x.stopReason === 'length').length, 9);
    expect(m['rx/completions/max_length']).toBe(Math.max(...s.rollouts.map((x) => x.completionTokens)));
    expect(m['env/all/by_group/frac_mixed']! + m['env/all/by_group/frac_all_good']! + m['env/all/by_group/frac_all_bad']!).toBeCloseTo(1, 12);
    expect(m['rx/frac_reward_zero_std']).toBeGreaterThanOrEqual(0);
    if (s.estimator === 'group_mean') expect(m['rx/frac_reward_zero_std']).toBeCloseTo(1 - m['env/all/by_group/frac_mixed']!, 12);
    else expect(m['rx/frac_reward_zero_std']! * n).toBeCloseTo(s.rollouts.filter((x) => Math.abs(x.baseline - x.reward) <= 1e-12).length, 9);
  });
  const transcripts = jsonLines<unknown>(path.join(armDir, 'transcripts.jsonl')).map((l) => transcriptLineSchema.strict().parse(l));
  for (const s of steps) {
    const mine = transcripts.filter((t) => t.step === s.step);
    expect(mine.length).toBeGreaterThan(0);
    expect(mine.length).toBeLessThanOrEqual(TRANSCRIPTS_PER_STEP);
    for (const t of mine) {
      const r = s.rollouts.find((x) => x.rolloutId === t.rolloutId)!;
      expect([t.promptId, t.reward, t.advantage, t.correct]).toEqual([r.promptId, r.reward, r.advantage, r.correct]);
      expect(t.prompt.length).toBeGreaterThan(0);
    }
  }
}

/** checks a completed run directory; returns its record and the recomputed decision */
export function checkCompletedRun(
  out: string,
  expectedTestIds: readonly string[],
  /** a service whose forward_backward logprobs carry per-request noise (hosted-like): the arms' outputs are the same within the tolerance, not bit for bit */
  opts: { noisyLogprobs?: boolean } = {},
): { record: RunRecord; decision: HoeffdingRecord; spec: ExperimentSpec } {
  const dir = new RunDir(out);
  const parsed = loadSpecText(readFileSync(dir.specFile, 'utf8'));
  if (!parsed.ok) throw new Error(parsed.errors.join('\n'));
  const spec = parsed.spec;
  checkRunFilesAgainstContract(dir, spec);
  const t = treatmentArm(spec).name;
  const b = baselineArm(spec).name;
  const record: RunRecord = readRunFile(dir, 'record.json');
  expect(record.status).toBe('complete');
  expect(record.effective_config).toEqual(dir.readJson(dir.effectiveConfigFile));

  // preflight: every correctness check passed with its numbers, the update check, and a finite probe per arm
  const pf = preflightResultSchema.parse(dir.readJson(dir.preflightFile));
  expect(record.correctness_preflight).toEqual(pf);
  expect([pf.pass, pf.failures]).toEqual([true, []]);
  expect(pf.checks.map((c) => c.id).sort()).toEqual([...PREFLIGHT_CHECK_IDS].sort());
  for (const c of pf.checks) expect([c.id, c.pass, c.fixed_input_sha256]).toEqual([c.id, true, expect.stringMatching(/^[0-9a-f]{64}$/)]);
  expect(pf.paths[0].errors.baseline_loss.reference_max_abs).toBeGreaterThan(0);
  expect(pf.update_direction.delta_loss).toBeLessThan(0);
  expect(pf.shared_init.untouched).toBe(true);
  expect(pf.probe.map((p) => [p['arm'], p['finite']])).toEqual(spec.arms.map((a) => [a.name, true]));

  // shared initialisation: one state, identical outputs for both arms before and at their first update
  if (opts.noisyLogprobs) {
    expect([record.shared_initialisation?.identical, record.shared_initialisation?.same_output?.pass]).toEqual([false, true]);
  } else {
    expect(record.shared_initialisation?.identical).toBe(true);
    expect(new Set(Object.values(record.shared_initialisation!.arms).map((a) => a.output_sha256)).size).toBe(1);
  }
  expect(record.training?.first_update_check?.identical).toBe(true);

  // pilot: the gate metrics of the chosen pilot recomputed from its step logs and held-out rewards
  const pilot = readRunFile(dir, 'pilot.json');
  expect(record.gates).toEqual(pilot);
  expect(pilot.pass).toBe(true);
  const chosen = pilot.pilots[pilot.pilots.length - 1];
  expect(chosen.bandwidth).toBe(pilot.chosen_bandwidth);
  expect(chosen.dir).toBe(`pilot_bw${formatBandwidth(chosen.bandwidth)}`);
  const tSteps = jsonLines<StepRecord>(dir.path(chosen.dir, t, 'steps.jsonl'));
  const bSteps = jsonLines<StepRecord>(dir.path(chosen.baseline_from, b, 'steps.jsonl'));
  expect([tSteps.length, bSteps.length]).toEqual([2, 1]);
  const heldout = jsonLines<{ promptId: string; rewards: number[] }>(dir.path(chosen.heldout_from, 'heldout.jsonl'));
  expect(heldout).toHaveLength(64);
  expect(heldout.every((h) => h.rewards.length === 8)).toBe(true);
  const metrics = gateMetrics({ batches: [...tSteps, ...bSteps].map(loggedBatch), treatmentArm: t, baselineArm: b, heldout, pilotSteps: 2 });
  expect(chosen.metrics).toEqual(JSON.parse(JSON.stringify(metrics)));
  expect(chosen.report).toEqual(JSON.parse(JSON.stringify(evaluateGates(spec, metrics))));
  for (const kept of pilot.failed_logs) expect(existsSync(dir.path(kept, t, 'steps.jsonl'))).toBe(true);

  // training: one valid StepRecord per step and arm; the checkpoints and final weights recorded from them
  for (const arm of spec.arms.map((a) => a.name)) {
    const steps = jsonLines<unknown>(dir.stepsFile(arm)).map((l) => stepRecordSchema.parse(l));
    expect(steps.map((s) => s.step)).toEqual(Array.from({ length: spec.steps }, (_, i) => i));
    expect(steps.every((s) => s.rollouts.length === spec.batch_size)).toBe(true);
    const tr = record.training!.arms[arm];
    expect(tr.checkpoints.map((c) => c.sampler_path)).toEqual(steps.map((s) => s.samplerPath));
    expect(tr.final.sampler_path).not.toBe(steps[steps.length - 1].samplerPath);
    checkStepLogs(dir.armDir(arm), steps);
  }
  expect(record.training!.arms[t].bandwidth).toBe(pilot.chosen_bandwidth);

  // evaluation: one line per test item for base and both arms, hashes and accuracies as recorded
  for (const model of ['base', b, t]) {
    const ev = jsonLines<{ item_id: string; correct: boolean; extracted: string | null; completion: string }>(dir.evalFile(model));
    expect(ev.map((l) => l.item_id)).toEqual([...expectedTestIds]);
    expect(ev.every((l) => typeof l.correct === 'boolean' && typeof l.completion === 'string' && 'extracted' in l)).toBe(true);
    expect(record.evaluation!.models[model].sha256).toBe(sha256Hex(readFileSync(dir.evalFile(model))));
    expect(record.evaluation!.models[model].accuracy).toBe(ev.filter((l) => l.correct).length / ev.length);
  }
  expect(record.evaluation!.evaluator_id).toBe(sha256Json(record.evaluation!.evaluator));

  // decision: recomputed from the eval files under the pre-registered bound, and what `rx decide` prints for them;
  // the other bounds beside it, exploratory
  const paired = pairItemFiles({ source: 't', text: readFileSync(dir.evalFile(t), 'utf8') }, { source: 'b', text: readFileSync(dir.evalFile(b), 'utf8') });
  const decision = hoeffdingRecord(pairedBound(paired, decisionRule(spec)));
  expect(record.decision).toMatchObject(decision);
  expect(dir.readJson(dir.decisionFile)).toMatchObject({ ...decision, exploratory: allBoundRecords(paired, decisionRule(spec)).slice(1) });
  const decide = cli(['decide', '--spec', dir.specFile, '--treatment', dir.evalFile(t), '--baseline', dir.evalFile(b)]);
  expect(decide.status).toBe(0);
  expect(JSON.parse(decide.stdout)).toEqual(decision);
  expect(record.verdict.outcome).toBe(decision.outcome);
  // the report's discordant items, read from the eval files the evaluator wrote: one per win, with both answers
  const discordant = discordantItems(out, t, b, Number.MAX_SAFE_INTEGER);
  expect(discordant.total).toBe(decision.wins_treatment + decision.wins_baseline);
  const lines = (arm: string) => new Map(jsonLines<{ item_id: string; extracted: string | null; completion: string }>(dir.evalFile(arm)).map((l) => [l.item_id, l]));
  const [tLines, bLines] = [lines(t), lines(b)];
  for (const d of discordant.items) {
    expect([d.treatmentAnswer, d.baselineAnswer]).toEqual([tLines.get(d.itemId)?.extracted ?? '(no answer)', bLines.get(d.itemId)?.extracted ?? '(no answer)']);
    expect(tLines.get(d.itemId)?.completion.startsWith(d.treatmentCompletion)).toBe(true);
  }

  // code revision, observations, wall time per phase, feasibility against the budget
  expect(record.code_revision.files['apps/controller/src/main.ts']).toBe(sha256Hex(readFileSync(path.join(REPO_ROOT, 'apps/controller/src/main.ts'))));
  expect(Object.keys(record.observations.files)).toEqual(expect.arrayContaining([`${t}/eval.jsonl`, `${b}/steps.jsonl`, `${chosen.heldout_from}/heldout.jsonl`]));
  for (const [f, h] of Object.entries(record.observations.files)) expect([f, sha256Hex(readFileSync(dir.path(f)))]).toEqual([f, h]);
  expect(record.observations.sha256).toBe(sha256Json(record.observations.files));
  for (const p of ['setup', 'preflight', 'pilot', 'training', 'evaluation'] as const) expect(record.wall_seconds.by_category[p]).toBeGreaterThan(0);
  expect(record.feasibility.budget).toEqual({ max_wall_minutes: spec.budget.max_wall_minutes, gpu_hours: spec.budget.gpu_hours });
  expect(record.feasibility.projections[0]).toMatchObject({ label: 'this run', steps: spec.steps, n_eval: spec.eval.n_examples });
  return { record, decision, spec };
}
