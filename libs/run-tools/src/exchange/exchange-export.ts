// rx export <run dir>: the run's record in the research exchange's schema (@rx/exchange-record), written to
// <run>/exchange/record.json, plus the files it names that the run directory does not already hold: the item
// manifest, the scored observations the decision was computed from, one restore-evidence file per arm and the
// source files the correctness revisions pin (exchange/files/<repo path>). Every hash in the record is of a file
// in the run directory, so `rx check-record` can re-derive each one.
import { copyFileSync, existsSync, mkdirSync } from 'node:fs';
import * as path from 'node:path';
import type { StepRecord } from '@rx/contracts';
import { evaluatorIdentity, exchangeRecordSchema, expectedRunOf, SHARED_INIT_ARM, type ExchangeRecord, type ExpectedRun } from '@rx/exchange-record';
import { adamParamsFor } from '@rx/pipeline';
import type { ExperimentSpec } from '@rx/spec';
import { REPO_ROOT } from '@rx/local-stack';
import { BASE_EVAL_NAME, observationFiles, sha256Hex, sha256Json, readRunFileIfExists, readRunLines, RunDir, RunFileError, type AdapterHash, type ArmTraining, type EvaluationResult, type RunFileName, type RunFileType, type SharedInitResult } from '@rx/run-dir';
import { correctnessPaths, REVISION_FILES, SHIPPED_FILES_DIR } from './correctness-paths';
import { exchangeFeasibility } from './exchange-feasibility';

export const EXCHANGE_DIR = 'exchange';
export const EXCHANGE_RECORD = `${EXCHANGE_DIR}/record.json`;
const ITEMS_FILE = `${EXCHANGE_DIR}/items.jsonl`;
const OBSERVATIONS_FILE = `${EXCHANGE_DIR}/scored-observations.jsonl`;
const initEvidenceFile = (arm: string) => `${EXCHANGE_DIR}/init/${arm}.json`;

/** A run directory that lacks what the export needs (one line for the user). */
export class ExportError extends Error {
  override readonly name = 'ExportError';
}

/** spec.json, read back through its schema */
export function readRunSpec(dir: RunDir): ExperimentSpec {
  try {
    const spec = readRunFileIfExists(dir, 'spec.json');
    if (spec === null) throw new ExportError(`${dir.root} holds no spec.json: not a run directory`);
    return spec;
  } catch (err) {
    if (err instanceof RunFileError) throw new ExportError(err.message);
    throw err;
  }
}

/** a file of the run the export needs, read back through its schema: missing or damaged is an ExportError (one line) */
function need<N extends RunFileName>(dir: RunDir, name: N, what: string, file?: string): RunFileType<N> {
  let value: RunFileType<N> | null;
  try {
    value = readRunFileIfExists(dir, name, file);
  } catch (err) {
    if (err instanceof RunFileError) throw new ExportError(err.message);
    throw err;
  }
  if (value === null) throw new ExportError(`${dir.relative(file ?? dir.path(name))} is missing: the run has no ${what} (run it to the end, or resume it)`);
  return value;
}

function writeLines(dir: RunDir, rel: string, rows: unknown[]): string {
  dir.writeLines(dir.path(rel), rows);
  return sha256Hex(dir.readText(dir.path(rel)));
}

function stepZero(dir: RunDir, t: ArmTraining): StepRecord | null {
  return readRunLines(dir, '<arm>/steps.jsonl', dir.stepsFile(t.arm)).find((r) => r.runId === t.run_id && r.step === 0) ?? null;
}

/** When the service gave no adapter bytes: the arms' identical outputs on the fixed batch, and weights_info. */
function standInEvidence(init: SharedInitResult, weightsInfo: Record<string, unknown> | null): Record<string, unknown> {
  const outputs = Object.fromEntries(Object.entries(init.arms).map(([arm, a]) => [arm, a.output_sha256]));
  return { initial_output_sha256: outputs, identical: init.identical, fixed_batch_sha256: init.fixed_batch_sha256, weights_info: weightsInfo };
}

/** The exchange's `note`: a refused seed and adapter bytes that could not be hashed, with what stands in; null when neither. */
function initializationNote(init: SharedInitResult, adapter: AdapterHash | null, standIn: Record<string, unknown> | null): string | null {
  const parts: string[] = [];
  if (init.lora.seed_refused) parts.push(`per-model seed ${init.lora.seed} refused by the service at create_model, so the shared state was created once without it`);
  if (adapter && adapter.sha256 === null) {
    const info = adapter.weights_info ? `; weights_info: ${adapter.weights_info['base_model'] ?? '?'}, LoRA rank ${adapter.weights_info['lora_rank'] ?? '?'}` : '';
    const out = standIn ? `; stand-in: the same initial output ${String(Object.values(init.arms)[0]?.output_sha256 ?? '').slice(0, 12)}… on ${Object.keys(init.arms).length} arms${init.identical ? '' : ' (NOT identical)'}` : '';
    // the route with its ids as placeholders: the same words for every arm (each arm's own path is in its evidence file)
    const why = (adapter.unavailable ?? adapter.source).replace(/\/training_runs\/[^/\s]+\/checkpoints\/([^/\s]+)\/[^/\s]+\/archive/g, '/training_runs/{model_id}/checkpoints/$1/{name}/archive');
    parts.push(`adapter bytes could not be hashed: ${why}${out}${info}`);
  }
  return parts.length > 0 ? parts.join('; ') : null;
}

function initialization(dir: RunDir, spec: ExperimentSpec, expected: ExpectedRun, init: SharedInitResult, training: Record<string, ArmTraining>): ExchangeRecord['initialization_provenance'] {
  const arms: ExchangeRecord['initialization_provenance']['arms'] = {};
  for (const { name, optimizer } of expected.arms) {
    const a = init.arms[name];
    const restore = a?.restore;
    const t = training[name];
    const first = t ? stepZero(dir, t) : null;
    // the restore precedes the first update when it happened before the trainer committed the arm's step 0
    const before = restore !== undefined && first !== null && Date.parse(restore.loaded_at) < Date.parse(first.committedAt);
    const adam = first ? adamParamsFor(first.learningRate) : null;
    const ref = initEvidenceFile(name);
    const evidence = {
      arm: name,
      loaded_checkpoint_uri: restore?.loaded_state_path ?? null,
      load_succeeded: restore?.load_succeeded ?? false,
      adapter_sha256: restore?.adapter.sha256 ?? null,
      adapter_source: restore?.adapter.source ?? null,
      resaved_state_path: restore?.resaved_state_path ?? null,
      restore_count: restore?.restore_count ?? 0,
      loaded_at: restore?.loaded_at ?? null,
      batch_sha256: init.fixed_batch_sha256,
      output_sha256: a?.output_sha256 ?? null,
      // the arms' outputs compared within a stated tolerance (max |logprob difference| measured at the shared init)
      same_output: init.same_output ?? null,
      first_update: first ? { run_id: first.runId, committed_at: first.committedAt, learning_rate: first.learningRate, optimizer_step: first.optimizerStep } : null,
      optimizer_step_after_restore: restore?.adapter.optimizer_step ?? null,
    };
    // what the exchange cannot check here, in its own terms (the note), and the evidence that stands in
    const standIn = restore && restore.adapter.sha256 === null ? standInEvidence(init, restore.adapter.weights_info ?? null) : null;
    const note = initializationNote(init, restore?.adapter ?? null, standIn);
    Object.assign(evidence, { seed_refused: init.lora.seed_refused ?? null, adapter_unavailable: restore?.adapter.unavailable ?? null, weights_info: restore?.adapter.weights_info ?? null, stand_in_evidence: standIn });
    dir.writeJson(dir.path(ref), evidence);
    arms[name] = {
      initialization: {
        base_checkpoint: spec.base_model,
        checkpoint_uri: init.state_path,
        checkpoint_immutable: true,
        checkpoint_scope: 'full_initialization',
        loaded_checkpoint_uri: evidence.loaded_checkpoint_uri,
        load_succeeded: evidence.load_succeeded,
        adapter_sha256: evidence.adapter_sha256,
        source: restore?.adapter.source ?? 'no restore evidence in shared-init.json',
        evidence_ref: ref,
        before_first_update: before,
        ...(note ? { note } : {}),
        ...(standIn ? { stand_in_evidence: standIn } : {}),
      },
      restore_count: evidence.restore_count,
      optimizer_checks: [
        {
          after_restore: 1,
          before_next_update: first !== null && first.optimizerStep === 1,
          requested: { ...optimizer },
          actual_family: adam ? 'adamw' : null,
          actual_config: adam
            ? { lr: adam.learningRate, beta1: adam.beta1, beta2: adam.beta2, eps: adam.eps, optimizer_step_after_restore: evidence.optimizer_step_after_restore, optimizer_step_after_first_update: first?.optimizerStep ?? null }
            : null,
          source: "the trainer's step 0 record (learning rate, the optimizer's step counter after it) and the AdamParams it sends (libs/pipeline adamParamsFor)",
          evidence_ref: ref,
        },
      ],
      initial_output: {
        available: evidence.output_sha256 !== null,
        batch_sha256: init.fixed_batch_sha256,
        output_sha256: evidence.output_sha256,
        evidence_ref: ref,
        before_first_update: before,
        ...(init.same_output ? { same_output: init.same_output } : {}),
      },
    };
  }
  return { version: 1, arms };
}

function evaluationSection(dir: RunDir, spec: ExperimentSpec, evaluation: EvaluationResult): ExchangeRecord['evaluation'] {
  // the item manifest: the items of the first model evaluated, in order; the evaluator's count binds it to what the
  // evaluation phase loaded, so an item dropped from every file still shows
  const first = evaluation.models[BASE_EVAL_NAME] ?? Object.values(evaluation.models)[0];
  const ids = readRunLines(dir, '<model>/eval.jsonl', dir.path(first.file)).map((l) => l.item_id);
  const manifest_sha256 = writeLines(dir, ITEMS_FILE, ids.map((item_id) => ({ item_id })));
  const e = evaluation.evaluator;
  const evaluator = {
    code_sha256: sha256Json(e.code),
    prompt_template: e.prompt_template,
    decoding: { ...e.decoding },
    parser: 'libs/grading gradeCompletion on the completion without its final stop token: the last \\boxed{} against the answer (apps/controller/src/phases/evaluation/evaluator.ts)',
    items: { manifest_ref: ITEMS_FILE, manifest_sha256, count: e.items },
    code_files: e.code,
    rx_evaluator_id: evaluation.evaluator_id,
  };
  const id = evaluatorIdentity(evaluator);
  const seed = (arm: string) => spec.arms.find((a) => a.name === arm)?.seed ?? 0;
  return {
    version: 1,
    evaluators: { [id]: evaluator },
    scores: Object.values(evaluation.models).map((m) => ({ arm: m.model, metric: 'accuracy', value: m.accuracy, evaluator_id: id, seed: seed(m.model), predictions_ref: m.file, predictions_sha256: m.sha256 })),
    comparisons: [{ metric: 'accuracy', arms: spec.arms.map((a) => a.name) }],
  };
}

function observations(dir: RunDir, expected: ExpectedRun, evaluation: EvaluationResult): ExchangeRecord['decision'] {
  const correct = (arm: string) => new Map(readRunLines(dir, '<model>/eval.jsonl', dir.path(evaluation.models[arm].file)).map((l) => [l.item_id, l.correct ? 1 : 0]));
  const t = correct(expected.treatment);
  const b = correct(expected.baseline);
  const rows = [...t.keys()].filter((id) => b.has(id)).map((item_id) => ({ item_id, treatment: t.get(item_id), baseline: b.get(item_id) }));
  return { version: 1, observations_file: { name: OBSERVATIONS_FILE, sha256: writeLines(dir, OBSERVATIONS_FILE, rows) } };
}

/** copies the source files the revisions pin into exchange/files/ (as they are in the repository now) */
function shipRevisionFiles(dir: RunDir): void {
  for (const f of [...REVISION_FILES.baseline, ...REVISION_FILES.reference, ...REVISION_FILES.implementation]) {
    const from = path.join(REPO_ROOT, f);
    if (!existsSync(from)) continue;
    const to = dir.path(SHIPPED_FILES_DIR, f);
    mkdirSync(path.dirname(to), { recursive: true });
    copyFileSync(from, to);
  }
}

export function buildExchangeRecord(root: string): { file: string; record: ExchangeRecord } {
  const dir = new RunDir(root);
  const spec = readRunSpec(dir);
  const expected = expectedRunOf(spec);
  const record = need(dir, 'record.json', 'record.json');
  const preflight = need(dir, 'preflight.json', 'correctness preflight');
  const init = need(dir, 'shared-init.json', 'shared initialisation');
  const evaluation = need(dir, 'evaluation.json', 'evaluation');
  const decision = need(dir, 'decision-summary.json', 'decision');
  const effective = need(dir, 'effective-config.json', 'effective configuration');
  const training: Record<string, ArmTraining> = {};
  for (const a of spec.arms) training[a.name] = need(dir, '<arm>/training.json', `training of ${a.name}`, dir.trainingFile(a.name));

  shipRevisionFiles(dir);
  const stepsTrained = Math.min(...Object.values(training).map((t) => t.steps));
  const counts = new Set(Object.values(evaluation.models).map((m) => m.n));
  const models = Object.values(evaluation.models);
  const exchange: ExchangeRecord = {
    correctness_preflight: { required: spec.correctness_preflight.required, paths: correctnessPaths(preflight, record.code_revision.files) },
    initialization_provenance: initialization(dir, spec, expected, init, training),
    evaluation: evaluationSection(dir, spec, evaluation),
    decision: observations(dir, expected, evaluation),
    feasibility: exchangeFeasibility({
      effective: {
        base_model: effective.base_model,
        lora_rank: effective.lora_rank,
        dataset: effective.data.dataset.name,
        steps: effective.steps,
        batch_size: effective.batch_size,
        max_seq_len: effective.max_seq_len,
        max_tokens: effective.sampling.maxTokens,
        arms: effective.arms.map((a) => a.name),
        n_examples: effective.data.n_train,
        n_eval: effective.data.n_test,
      },
      stepsTrained,
      armsTrained: Object.keys(training),
      itemsPerModel: counts.size === 1 ? [...counts][0] : null,
      models: models.length,
      phases: record.wall_seconds.by_category,
      pilotSources: ['pilot.json', ...observationFiles(dir).filter((f) => f.startsWith('pilot_'))].filter((f) => dir.exists(dir.path(f))),
    }),
    checkpoints: [
      { arm: SHARED_INIT_ARM, step: 0, uri: init.state_path, adapter_sha256: init.adapter?.sha256 ?? null },
      ...Object.values(training).map((t) => ({ arm: t.arm, step: t.steps, uri: t.final.sampler_path, ...(t.final.adapter ? { adapter_sha256: t.final.adapter.sha256 } : {}) })),
    ],
    per_arm_metrics: Object.fromEntries(models.map((m) => [m.model, { accuracy: m.accuracy }])),
    verdict_report: {
      effect: decision.effect,
      margin: decision.rule.margin,
      lower: decision.lower,
      upper: decision.upper,
      seeds: spec.decision_rule.seeds?.length ?? 1,
      confidence: (spec.decision_rule.seeds?.length ?? 1) > 1 ? 'moderate' : 'weak',
      reasoning: record.verdict.reasoning.join(' '),
    },
  };
  const parsed = exchangeRecordSchema.parse(exchange);
  const file = dir.path(EXCHANGE_RECORD);
  dir.writeJson(file, parsed);
  return { file, record: parsed };
}
