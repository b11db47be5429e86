// Phase 8: record.json, assembled from the files the phases wrote (so a resumed or stopped run gets its record
// the same way): effective config, preflight numbers, gate reports (failed ones too), checkpoints per arm and
// step, the code revision (sha256 of every source file), predictions and observations sha256, wall time per
// phase, the feasibility projection against the spec's budget, and the verdict with its reasoning.
import { budget, correctnessPreflight, type ExperimentSpec } from '@rx/spec';
import { observationFiles, PREDICTION_FIELDS, readRunFileIfExists, sha256Hex, sha256Json, writeRunFile, type ArmTraining, type RunStateStore, type PhaseName, type PhaseSeconds, type RunDir, type RunManifest, type RunRecord, type RunState, type ProjectionConfig } from '@rx/run-dir';
import { REPO_ROOT } from '../../infra/repo-root';
import { feasibility } from './feasibility';
import { codeRevision } from './source-hashes';
import { verdictOf } from './verdict';

export interface RecordInput {
  dir: RunDir;
  manifest: RunManifest;
  state: RunState;
  spec: ExperimentSpec;
  /** the spec before the override (null when none was applied) */
  sourceSpec: ExperimentSpec | null;
  cpus: number;
}

export function categorise(w: Partial<Record<PhaseName, number>>): PhaseSeconds {
  const g = (k: PhaseName) => w[k] ?? 0;
  return {
    setup: g('setup') + g('effective_config') + g('shared_init'),
    preflight: g('preflight'),
    pilot: g('pilot'),
    training: g('training'),
    evaluation: g('evaluation'),
    other: g('decision') + g('record'),
  };
}

export function buildRecord(i: RecordInput): RunRecord {
  const { dir } = i;
  // every file read back through its schema: a damaged one is a RunFileError naming it, never a record built on it
  const preflight = readRunFileIfExists(dir, 'preflight.json');
  const init = readRunFileIfExists(dir, 'shared-init.json');
  const pilot = readRunFileIfExists(dir, 'pilot.json');
  const evaluation = readRunFileIfExists(dir, 'evaluation.json');
  const decision = readRunFileIfExists(dir, 'decision-summary.json');
  const arms: Record<string, ArmTraining> = {};
  for (const a of i.spec.arms) {
    const t = readRunFileIfExists(dir, '<arm>/training.json', dir.trainingFile(a.name));
    if (t) arms[a.name] = t;
  }
  const trainingSummary = readRunFileIfExists(dir, 'training.json');
  const training = Object.keys(arms).length > 0 ? { bandwidth: trainingSummary?.bandwidth ?? pilot?.chosen_bandwidth ?? null, arms, first_update_check: trainingSummary?.first_update_check ?? null } : null;

  const files = Object.fromEntries(observationFiles(dir).map((f) => [f, sha256Hex(dir.readText(dir.path(f)))]));
  const prediction = Object.fromEntries(PREDICTION_FIELDS.map((k) => [k, i.spec[k]]));
  const code = codeRevision(REPO_ROOT);
  const codes = new Set(i.state.attempts.map((a) => a.codeSha256).filter((c): c is string => c !== null));
  const phases = categorise(i.state.wallSeconds);
  const b = budget(i.spec);
  const models = 1 + i.spec.arms.length;
  const configs: ProjectionConfig[] = [{ label: 'this run', steps: i.spec.steps, n_eval: i.spec.eval.n_examples, models }];
  if (i.sourceSpec) configs.push({ label: 'the pre-registered spec', steps: i.sourceSpec.steps, n_eval: i.sourceSpec.eval.n_examples, models });
  const stepsTrained = Math.max(0, ...Object.values(arms).map((a) => a.steps));
  const itemsEvaluated = Object.values(evaluation?.models ?? {}).reduce((s, m) => s + m.n, 0);
  const verdict = verdictOf({
    status: i.state.status,
    stopReason: i.state.reason,
    decision,
    pilot,
    specPreflight: correctnessPreflight(i.spec),
    reduced: i.sourceSpec !== null,
  });
  return {
    version: 1,
    run_id: i.manifest.runId,
    title: i.spec.title,
    status: i.state.status,
    created_at: i.manifest.createdAt,
    recorded_at: new Date().toISOString(),
    verdict,
    spec: { ...i.manifest.spec, override: i.manifest.override, file: dir.relative(dir.specFile) },
    revision: i.spec.revision ?? null,
    backend: i.manifest.backend,
    services: i.manifest.services,
    effective_config: readRunFileIfExists(dir, 'effective-config.json'),
    correctness_preflight: preflight,
    shared_initialisation: init,
    gates: pilot,
    training,
    evaluation,
    decision,
    code_revision: code,
    code_changed_between_attempts: codes.size > 1 || (codes.size === 1 && !codes.has(code.tree_sha256)),
    predictions: { sha256: sha256Json(prediction), fields: PREDICTION_FIELDS },
    observations: { sha256: sha256Json(files), files },
    wall_seconds: { ...i.state.wallSeconds, by_category: phases },
    feasibility: feasibility({ phases, stepsTrained, itemsEvaluated, budget: { maxWallMinutes: b.maxWallMinutes, gpuHours: b.gpuHours }, configs, backend: i.manifest.backend }),
    attempts: i.state.attempts,
    environment: { node: process.version, platform: process.platform, arch: process.arch, cpus: i.cpus },
  };
}

/**
 * Writes record.json when an attempt ends (complete, stopped or failed), then again with the record phase's own
 * wall time in it; the record as written.
 */
export function writeRecord(i: Omit<RecordInput, 'state'>, state: RunStateStore): RunRecord {
  const started = Date.now();
  writeRunFile(i.dir, 'record.json', buildRecord({ ...i, state: state.state }));
  state.addWall('record', (Date.now() - started) / 1000);
  state.complete('record');
  const record = buildRecord({ ...i, state: state.state });
  writeRunFile(i.dir, 'record.json', record);
  return record;
}
