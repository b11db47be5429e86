// A small synthetic run directory, laid out as apps/controller writes one (the run-directory contract, @rx/run-dir):
// run.json, state.json, spec.json,
// effective-config.json, pilot_bw0.5_FAILED_ess/ (the failed pilot kept beside the calibration) and pilot_bw1.0/
// with their step logs, held-out rewards and gate-report.json, pilot.json (PilotResult: the gate reports from
// @rx/gates on those logs), <arm>/steps.jsonl (trainer StepRecords, checked against @rx/contracts) and
// <arm>/training.json, <model>/eval.jsonl, decision-summary.json (@rx/stats on the eval files) and record.json.
// Every JSON file is written through the contract's writer (writeRunFile), so the fixture cannot drift from what
// the controller writes and the readers accept; seeded: the same options give the same files.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { stepMetricsLine, stepRecordSchema, type StepRecord } from '@rx/contracts';
import { evaluateGates, formatGateReport, gateMetrics, type ActivationGateSource, type GateReport, type HeldoutPromptRewards, type LoggedBatch } from '@rx/gates';
import { hoeffdingRecord, pairedHoeffding, percentile, type HoeffdingRecord, type HoeffdingRule, mulberry32 } from '@rx/stats';
import { RunDir, writeRunFile, type EvalLine, type PilotReport, type RunFileName, type RunRecord } from '@rx/run-dir';

const FIXTURE_SPEC_FILE = path.resolve(__dirname, '../../../specs/embedded.json');

export interface SyntheticRunOptions {
  /** training steps per arm (default 6) */
  steps?: number;
  /** test items evaluated (default 80) */
  evalItems?: number;
  seed?: number;
  /**
   * complete (default): the pilot fails kernel_effective_neighbors_p10 at 0.5, the calibration passes at 1.0, both
   * arms train, evaluate and are decided; stopped: the calibration fails too, no arm is trained (no steps, eval
   * files or decision), the record's verdict says why.
   */
  scenario?: 'complete' | 'stopped';
  /**
   * parts not written: pilot (the pilot directories and pilot.json), pilot-summary (pilot.json only: the gate
   * reports are the pilot directories'), spec (spec.json: the arms come from effective-config.json)
   */
  omit?: ReadonlyArray<'training' | 'eval' | 'decision' | 'record' | 'pilot' | 'pilot-summary' | 'spec'>;
}

export interface SyntheticRun {
  root: string;
  runId: string;
  treatment: string;
  baseline: string;
  /** the training step records per arm, as written (empty when stopped) */
  training: Record<string, StepRecord[]>;
  /** per item (item_id = index), correct or not, per model (`base` and each arm) */
  eval: Record<string, boolean[]>;
  /** the pilots in the order they ran (the failed one first), with the directory each was kept in */
  gateReports: Array<{ bandwidth: number; dir: string; report: GateReport }>;
  /** null when stopped */
  decision: HoeffdingRecord | null;
  rule: HoeffdingRule;
}

interface FixtureSpec extends ActivationGateSource {
  title: string;
  base_model: string;
  lora_rank: number;
  max_seq_len: number;
  feasibility: { effective_config: { steps: number } };
  steps: number;
  arms: Array<{ name: string; advantage: string; group_size: number; groups_per_batch: number; lr: number; seed: number }>;
  decision_rule: { alpha: number; criteria: Array<{ id: string; metric: string; bounds: [number, number]; margin: number; weights: { treatment: number; baseline: number } }> };
}

export function writeSyntheticRun(root: string, options: SyntheticRunOptions = {}): SyntheticRun {
  const steps = options.steps ?? 6;
  const evalItems = options.evalItems ?? 80;
  const stopped = options.scenario === 'stopped';
  const omit = new Set(options.omit ?? []);
  const rand = mulberry32(options.seed ?? 7);
  const runId = 'rx-fixture-run';
  const shipped = JSON.parse(readFileSync(FIXTURE_SPEC_FILE, 'utf8')) as FixtureSpec;
  // the run's steps, and the feasibility section's copy of them (the spec requires the two to agree)
  const spec: FixtureSpec = { ...shipped, steps, feasibility: { ...shipped.feasibility, effective_config: { ...shipped.feasibility.effective_config, steps } } };
  const treatment = spec.arms.find((a) => a.advantage === 'kernel_cross_prompt_baseline');
  const baseline = spec.arms.find((a) => a.advantage === 'group_mean');
  if (!treatment || !baseline) throw new Error(`${FIXTURE_SPEC_FILE} lacks a kernel or a group-mean arm`);
  const primary = spec.decision_rule.criteria[0];
  const rule: HoeffdingRule = { alpha: spec.decision_rule.alpha, bounds: primary.bounds, margin: primary.margin, weights: primary.weights };
  const decisionRule = { method: 'paired_hoeffding' as const, alpha: rule.alpha, criterionId: primary.id, metric: primary.metric, bounds: rule.bounds, margin: rule.margin, weights: rule.weights };
  const createdAt = '2025-01-01T00:00:00.000Z';
  const w = new Writer(root);

  w.json('run.json', 'run.json', {
    version: 1,
    runId,
    createdAt,
    spec: { source: 'specs/embedded.json', sourceSha256: 'f'.repeat(64), sha256: 'e'.repeat(64) },
    override: null,
    backend: 'embedded',
    services: 'spawn',
  });
  if (!omit.has('spec')) w.json('spec.json', 'spec.json', spec);
  // as effective-config.phase writes it (the fields past the schema's pass through)
  const effectiveConfig = {
    run_id: runId,
    spec_sha256: 'e'.repeat(64),
    title: spec.title,
    base_model: spec.base_model,
    lora_rank: spec.lora_rank,
    steps,
    batch_size: 64,
    max_seq_len: spec.max_seq_len,
    arms: spec.arms.map((a) => ({ ...a, optimizer: { name: 'adam', lr: a.lr, beta1: 0.9, beta2: 0.95, eps: 1e-8 } })),
    sampling: { maxTokens: 64 },
    kernel: { bandwidth: 0.5, windowSize: 256, calibrationBandwidths: [0.5, 1.0] },
    gates: spec.activation_gate.checks.map((c) => ({ metric: c.metric, measures: c.measures, ...(c.one_of ? { oneOf: c.one_of.map(Number) } : {}), ...(c.min !== undefined ? { min: c.min } : {}), ...(c.max !== undefined ? { max: c.max } : {}) })),
    decision_rule: decisionRule,
    data: { dataset: { name: 'arith' }, n_train: 128, n_test: evalItems },
    backend: 'embedded' as const,
    services: 'spawn' as const,
  };
  w.json('effective-config.json', 'effective-config.json', effectiveConfig);

  // --- pilot at the pre-registered 0.5: too few neighbours (fails p10 >= 8), kept as pilot_bw0.5_FAILED_ess; the
  // calibration at 1.0 (treatment steps only; the baseline step and held-out rewards reused) passes, or not when stopped
  const pilotRun = (bw: number) => `${runId}.p1-bw${bw.toFixed(1)}`;
  const failedBaseline = stepRecord(rand, pilotRun(0.5), baseline.name, 0, 'group_mean', 8, 8, 0.4, [7, 7]);
  const gateReports: SyntheticRun['gateReports'] = [];
  const pilots: PilotReport[] = [];
  const plan: Array<[number, readonly [number, number]]> = [
    [0.5, [2, 7]],
    [1.0, stopped ? [3, 9] : [12, 40]],
  ];
  // each pilot prompt's true success rate: the held-out 8-sample mean reward and the kernel baseline both follow it
  const truth = Array.from({ length: 64 }, () => 0.1 + 0.6 * rand());
  const heldout: HeldoutPromptRewards[] = truth.map((q, g) => ({ promptId: `train-0-${g}`, rewards: Array.from({ length: 8 }, () => (rand() < q ? 1 : 0)) }));
  for (const [bandwidth, essRange] of plan) {
    const treatmentSteps = [0, 1].map((step) => stepRecord(rand, pilotRun(bandwidth), treatment.name, step, 'kernel_cross_prompt_baseline', 64, 1, 0.4, essRange, truth));
    const logged: LoggedBatch[] = [...treatmentSteps, failedBaseline].map((b) => ({ arm: b.arm, step: b.step, rollouts: b.rollouts }));
    const metrics = gateMetrics({ batches: logged, treatmentArm: treatment.name, baselineArm: baseline.name, heldout, pilotSteps: 2 });
    const report = evaluateGates(spec, metrics);
    const dir = bandwidth === 0.5 ? 'pilot_bw0.5_FAILED_ess' : 'pilot_bw1.0';
    const pilotReport = {
      bandwidth,
      run_id: pilotRun(bandwidth),
      dir,
      treatment_steps: 2,
      baseline_steps: bandwidth === 0.5 ? 1 : 0,
      baseline_from: 'pilot_bw0.5_FAILED_ess',
      heldout_from: 'pilot_bw0.5_FAILED_ess',
      metrics,
      report,
      lines: formatGateReport(report),
      wall_seconds: 3.5,
    };
    if (!omit.has('pilot')) {
      w.lines(path.join(dir, treatment.name, 'steps.jsonl'), treatmentSteps);
      w.lines(path.join(dir, treatment.name, 'metrics.jsonl'), treatmentSteps.map((r) => stepMetricsLine(r, treatmentSteps.length)));
      if (bandwidth === 0.5) {
        w.lines(path.join(dir, baseline.name, 'steps.jsonl'), [failedBaseline]);
        w.lines(path.join(dir, 'heldout.jsonl'), heldout);
      }
      w.json('<pilot>/gate-report.json', path.join(dir, 'gate-report.json'), pilotReport);
    }
    pilots.push(pilotReport);
    gateReports.push({ bandwidth, dir, report });
  }
  const calibrated = gateReports[1].report;
  const stopReason = stopped ? `activation gate failed at bandwidth 1.0: ${calibrated.results.filter((g) => !g.pass).map((g) => g.detail).join('; ')}` : null;
  const pilotResult = {
    pre_registered_bandwidth: 0.5,
    chosen_bandwidth: stopped ? null : 1.0,
    pass: !stopped,
    pilots,
    calibration: { ran: true, reason: 'kernel_effective_neighbors_p10 failed at bandwidth 0.5', candidates: [1.0], cap_steps: 2, cap_minutes: 10, wall_seconds: 4 },
    failed_logs: ['pilot_bw0.5_FAILED_ess'],
    stop_reason: stopReason,
  };
  if (!omit.has('pilot') && !omit.has('pilot-summary')) w.json('pilot.json', 'pilot.json', pilotResult);

  // --- training: GRPO 8 prompts x 8, GS1 64 prompts x 1; the reward rises over the steps
  const training: SyntheticRun['training'] = { [treatment.name]: [], [baseline.name]: [] };
  for (let step = 0; step < (stopped ? 0 : steps); step++) {
    const p = 0.3 + (0.3 * step) / Math.max(1, steps - 1);
    training[treatment.name].push(stepRecord(rand, `${runId}.t1`, treatment.name, step, 'kernel_cross_prompt_baseline', 64, 1, p, [12, 40]));
    training[baseline.name].push(stepRecord(rand, `${runId}.t1`, baseline.name, step, 'group_mean', 8, 8, p - 0.03, [7, 7]));
  }
  if (!omit.has('training') && !stopped) {
    for (const [arm, records] of Object.entries(training)) {
      w.lines(path.join(arm, 'steps.jsonl'), records);
      w.lines(path.join(arm, 'metrics.jsonl'), records.map((r) => stepMetricsLine(r, steps)));
      w.json('<arm>/training.json', path.join(arm, 'training.json'), {
        arm,
        run_id: `${runId}.t1`,
        attempt: 1,
        steps: records.length,
        bandwidth: arm === treatment.name ? 1.0 : null,
        checkpoints: records.map((r) => ({ step: r.step, sampler_path: r.samplerPath, state_path: null, committed_at: r.committedAt, loss: r.loss, reward_mean: r.gate.rewardMean })),
        final: { sampler_path: `embedded://${arm}/final`, state_path: `embedded://states/${arm}/final`, note: '' },
        dev_accuracy: devCurve(arm === treatment.name ? 0.3 : 0.28, records.length),
        wall_seconds: 12,
      });
    }
  }

  // --- evaluation: a latent difficulty per item, so the arms agree on most items
  const evalResult: SyntheticRun['eval'] = { base: [], [treatment.name]: [], [baseline.name]: [] };
  for (let i = 0; i < (stopped ? 0 : evalItems); i++) {
    const easy = rand();
    evalResult.base.push(easy < 0.2);
    evalResult[baseline.name].push(easy < 0.45 || rand() < 0.05);
    evalResult[treatment.name].push(easy < 0.47 || rand() < 0.05);
  }
  if (!omit.has('eval') && !stopped) {
    for (const [model, correct] of Object.entries(evalResult)) {
      // as the evaluator writes them (EvalLine of @rx/run-dir)
      const lines: EvalLine[] = correct.map((c, i) => ({ item_id: String(i), correct: c, extracted: c ? String(i) : '7', completion: `... \\boxed{${c ? i : 7}}`, stop_reason: 'stop', format_ok: true, completion_tokens: 12 }));
      w.lines(path.join(model, 'eval.jsonl'), lines);
    }
  }

  // --- decision: the paired Hoeffding rule on the eval files, as rx decide computes it
  const accuracy = (xs: boolean[]) => xs.filter(Boolean).length / xs.length;
  const decision = stopped ? null : hoeffdingRecord(pairedHoeffding(evalResult[treatment.name].map(Number), evalResult[baseline.name].map(Number), rule));
  const summary = decision && {
    ...decision,
    rule: decisionRule,
    treatment: { arm: treatment.name, file: `${treatment.name}/eval.jsonl`, sha256: 'a'.repeat(64), accuracy: accuracy(evalResult[treatment.name]) },
    baseline: { arm: baseline.name, file: `${baseline.name}/eval.jsonl`, sha256: 'b'.repeat(64), accuracy: accuracy(evalResult[baseline.name]) },
    evaluator_id: 'c'.repeat(64),
    reproduce: 'rx decide --spec spec.json --treatment gs1_kernel/eval.jsonl --baseline grpo_gs8/eval.jsonl',
  };
  if (!omit.has('decision') && summary) {
    w.json('decision-summary.json', 'decision-summary.json', summary);
  }
  const verdict = decision
    ? { outcome: decision.outcome, reasoning: [`${decision.outcome}: the interval [${decision.lower.toFixed(4)}, ${decision.upper.toFixed(4)}] against the margin ${rule.margin} over ${decision.n} paired items.`] }
    : { outcome: 'stopped' as const, reasoning: [`Stopped before a decision: ${stopReason}.`, 'No arm was trained; the gates are never relaxed.'] };
  const status = stopped ? ('stopped' as const) : ('complete' as const);
  const wall = { setup: 1, preflight: 2, pilot: 3, ...(stopped ? {} : { training: 30, evaluation: 5 }) };
  const attempts = [{ startedAt: createdAt, endedAt: createdAt, resumed: false, outcome: status, message: stopReason, codeSha256: null }];
  w.json('state.json', 'state.json', {
    runId,
    status,
    reason: stopReason,
    completed: stopped ? ['setup', 'effective_config', 'preflight', 'shared_init'] : ['setup', 'effective_config', 'preflight', 'shared_init', 'pilot', 'training', 'evaluation', 'decision', 'record'],
    wallSeconds: wall,
    attempts,
    arms: stopped ? {} : { [treatment.name]: { attempt: 1, runId: `${runId}.t1`, stepsDone: steps, done: true }, [baseline.name]: { attempt: 1, runId: `${runId}.t1`, stepsDone: steps, done: true } },
    pilotAttempt: 1,
    updatedAt: createdAt,
  });
  if (!omit.has('record')) {
    const byCategory = { setup: 1, preflight: 2, pilot: 3, training: stopped ? 0 : 30, evaluation: stopped ? 0 : 5, other: 0 };
    const record: RunRecord = {
      version: 1,
      run_id: runId,
      title: spec.title,
      status,
      created_at: createdAt,
      recorded_at: createdAt,
      verdict,
      spec: { source: 'specs/embedded.json', sourceSha256: 'f'.repeat(64), sha256: 'e'.repeat(64), override: null, file: 'spec.json' },
      revision: null,
      backend: 'embedded',
      services: 'spawn',
      effective_config: effectiveConfig,
      correctness_preflight: null,
      shared_initialisation: null,
      gates: pilotResult,
      training: null,
      evaluation: null,
      decision: summary,
      code_revision: { tree_sha256: 'd'.repeat(64), files: {}, file_count: 0, git: { commit: '0123456789abcdef0123456789abcdef01234567', dirty: true } },
      code_changed_between_attempts: false,
      predictions: { sha256: '1'.repeat(64), fields: [] },
      observations: { sha256: '2'.repeat(64), files: {} },
      wall_seconds: { ...wall, by_category: byCategory },
      feasibility: {
        measured: { ...byCategory, total: 41, steps_trained: stopped ? 0 : steps, seconds_per_step: stopped ? null : 30 / steps, items_evaluated: stopped ? 0 : 3 * evalItems, seconds_per_eval_item: stopped ? null : 5 / (3 * evalItems) },
        budget: { max_wall_minutes: 120, gpu_hours: 0 },
        projections: [],
        gpu_hours: { projected: 0, basis: 'the embedded backend runs on CPU: no GPU hours' },
        within_budget: true,
      },
      attempts,
      environment: { node: 'v20.0.0', platform: 'linux', arch: 'x64', cpus: 2 },
    };
    w.json('record.json', 'record.json', record);
  }
  return { root: path.resolve(root), runId, treatment: treatment.name, baseline: baseline.name, training, eval: evalResult, gateReports, decision, rule };
}

/** one trainer step record: `groups` prompts x `groupSize` rollouts, rewards ~ Bernoulli(truth[g] or p) */
function stepRecord(
  rand: () => number,
  runId: string,
  arm: string,
  step: number,
  estimator: 'group_mean' | 'kernel_cross_prompt_baseline',
  groups: number,
  groupSize: number,
  p: number,
  ess: readonly [number, number],
  /** per prompt, its success rate (default p for all) */
  truth?: readonly number[],
): StepRecord {
  const rollouts: StepRecord['rollouts'] = [];
  for (let g = 0; g < groups; g++) {
    const q = truth?.[g] ?? p;
    const rewards: number[] = Array.from({ length: groupSize }, () => (rand() < q ? 1 : 0));
    const groupMean = rewards.reduce((s, r) => s + r, 0) / groupSize;
    rewards.forEach((reward, k) => {
      const baseline = estimator === 'group_mean' ? groupMean : clamp01(q + (rand() - 0.5) * 0.3);
      const phi: [number, number] = [Math.log(40 + 60 * rand()), -2 - rand()];
      const completionTokens = 20 + Math.floor(80 * rand());
      rollouts.push({
        rolloutId: `${step}-${g * groupSize + k}`,
        promptId: `train-${step}-${g}`,
        phi,
        completionTokens,
        // max_tokens 96 in this fixture: the longest completions were cut
        stopReason: completionTokens >= 96 ? 'length' : 'stop',
        reward,
        correct: reward === 1,
        formatOk: reward === 1 || (g + k + step) % 4 !== 0,
        advantage: reward - baseline,
        baseline,
        effectiveNeighbors: estimator === 'group_mean' ? groupSize - 1 : ess[0] + (ess[1] - ess[0]) * rand(),
        fallback: false,
        dropped: false,
      });
    });
  }
  const n = rollouts.length;
  const neighbors = rollouts.map((r) => r.effectiveNeighbors);
  const record: StepRecord = {
    runId,
    arm,
    step,
    estimator,
    rollouts,
    datums: n,
    loss: -0.01 * (rand() - 0.5),
    optimizerStep: step + 1,
    learningRate: 4e-5,
    gate: {
      executedGroupSize: groupSize,
      rewardMean: rollouts.reduce((s, r) => s + r.reward, 0) / n,
      fracNonzeroAdvantage: rollouts.filter((r) => Math.abs(r.advantage) > 1e-6).length / n,
      effectiveNeighbors: { p10: percentile(neighbors, 10), p50: percentile(neighbors, 50), p90: percentile(neighbors, 90) },
      fallbackFraction: 0,
    },
    timings: { sample: 0.5, grade: 0.01, advantage: 0.01, train: 0.4 },
    samplerPath: `embedded://${runId}/${arm}/${step}`,
    committedAt: '2025-01-01T00:10:00.000Z',
  };
  return stepRecordSchema.parse(record);
}

class Writer {
  private readonly dir: RunDir;

  constructor(private readonly root: string) {
    this.dir = new RunDir(root);
  }

  /** a JSON file of the run, through the contract's writer (checked against the file's schema) */
  json<N extends RunFileName>(name: N, rel: string, value: Parameters<typeof writeRunFile<N>>[2]): void {
    writeRunFile(this.dir, name, value, this.dir.path(rel));
  }

  lines(rel: string, values: readonly unknown[]): void {
    this.text(rel, values.map((v) => `${JSON.stringify(v)}\n`).join(''));
  }

  private text(rel: string, text: string): void {
    const file = path.join(this.root, rel);
    mkdirSync(path.dirname(file), { recursive: true });
    writeFileSync(file, text, 'utf8');
  }
}

function clamp01(x: number): number {
  return Math.min(1, Math.max(0, x));
}


/** dev accuracy after 0, 10, 20, ... updates and at the last step: rising by 0.01 an update from `start` */
function devCurve(start: number, steps: number): Array<{ updates: number; sampler_path: string; n: number; correct: number; accuracy: number }> {
  const at = [...Array.from({ length: Math.ceil(steps / 10) }, (_, k) => k * 10), steps];
  return at.map((updates) => {
    const correct = Math.round((start + 0.01 * updates) * 128);
    return { updates, sampler_path: `embedded://dev/${updates}`, n: 128, correct, accuracy: correct / 128 };
  });
}
