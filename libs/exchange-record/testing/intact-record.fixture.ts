// A small, internally consistent exchange record with the files it names (hashes computed from the files' text),
// built the way rx export builds one, for the validators' tests: each test alters one piece and expects its
// validator to fail, and the intact one to pass.
import { pairedHoeffding } from '@rx/stats';
import { canonicalJson, evaluatorIdentity, sha256Text, type ExchangeRecord, type ExpectedRun, type RecordEvidence, type RecordFile } from '@rx/exchange-record';

export const ARMS = ['grpo_gs8', 'gs1_kernel'] as const;
const ITEMS = Array.from({ length: 40 }, (_, i) => `arith-test-${i}`);
// treatment right on items i % 3 != 0, baseline on i % 2 == 0, base on i % 5 == 0
const CORRECT: Record<string, (i: number) => boolean> = { base: (i) => i % 5 === 0, grpo_gs8: (i) => i % 2 === 0, gs1_kernel: (i) => i % 3 !== 0 };

export const expectedRun = (): ExpectedRun => ({
  arms: ARMS.map((name) => ({ name, optimizer: { family: 'adamw', lr: 4e-5, beta1: 0.9, beta2: 0.95, eps: 1e-8 } })),
  treatment: 'gs1_kernel',
  baseline: 'grpo_gs8',
  effective_config: { base_model: 'rx-embedded/char-lm', lora_rank: 32, dataset: 'arith', steps: 40, batch_size: 64, max_seq_len: 128, max_tokens: 32, arms: [...ARMS], n_examples: 2560, n_eval: 40 },
  max_wall_minutes: 120,
  decision: { alpha: 0.05, margin: -0.03, bounds: [0, 1], weights: { treatment: 1, baseline: -1 }, bound: 'hoeffding', orderSeed: 0 },
  correctness: {
    required: true,
    paths: [
      {
        id: 'gs1_kernel_advantage_loop',
        baseline_revision: 'UNRESOLVED: pin the tinker-cookbook commit',
        reference_revision: 'UNRESOLVED: pin a reference',
        tolerances: { baseline_loss: { atol: 1e-6, rtol: 1e-5 }, reference_gradient: { atol: 1e-5, rtol: 1e-4, min_cosine: 0.99999 } },
      },
    ],
  },
});

export interface IntactRecord {
  record: ExchangeRecord;
  texts: Record<string, string>;
  evidence: () => RecordEvidence;
}

const jsonl = (rows: unknown[]): string => rows.map((r) => `${JSON.stringify(r)}\n`).join('');

export function intactRecord(): IntactRecord {
  const texts: Record<string, string> = {};
  texts['exchange/items.jsonl'] = jsonl(ITEMS.map((item_id) => ({ item_id })));
  for (const m of Object.keys(CORRECT)) texts[`${m}/eval.jsonl`] = jsonl(ITEMS.map((item_id, i) => ({ item_id, correct: CORRECT[m](i), completion: 'x' })));
  const obs = ITEMS.map((item_id, i) => ({ item_id, treatment: CORRECT.gs1_kernel(i) ? 1 : 0, baseline: CORRECT.grpo_gs8(i) ? 1 : 0 }));
  texts['exchange/scored-observations.jsonl'] = jsonl(obs);
  texts['exchange/files/libs/preflight/src/importance-sampling.reference.ts'] = 'export const reference = 1;\n';
  texts['exchange/files/libs/estimators/src/kernel-baseline.ts'] = 'export const kernel = 2;\n';
  texts['exchange/files/apps/controller/src/phases/preflight/stock-datum.reference.ts'] = 'export const stock = 3;\n';
  texts['pilot.json'] = '{"pass":true}\n';
  texts['pilot_bw1.0/gs1_kernel/steps.jsonl'] = '{"step":0}\n';
  const h = (f: string) => sha256Text(texts[f]);

  const init = 'embedded://states/run-init';
  const adapter = sha256Text('adapter');
  const batch = sha256Text('batch');
  const output = sha256Text('output');
  const arms: ExchangeRecord['initialization_provenance']['arms'] = {};
  for (const arm of ARMS) {
    const ref = `exchange/init/${arm}.json`;
    texts[ref] = JSON.stringify({ arm, loaded_checkpoint_uri: init, load_succeeded: true, adapter_sha256: adapter, restore_count: 1, batch_sha256: batch, output_sha256: output });
    arms[arm] = {
      initialization: {
        base_checkpoint: 'rx-embedded/char-lm',
        checkpoint_uri: init,
        checkpoint_immutable: true,
        checkpoint_scope: 'full_initialization',
        loaded_checkpoint_uri: init,
        load_succeeded: true,
        adapter_sha256: adapter,
        source: 'embedded_state_file',
        evidence_ref: ref,
        before_first_update: true,
      },
      restore_count: 1,
      optimizer_checks: [
        {
          after_restore: 1,
          before_next_update: true,
          requested: { family: 'adamw', lr: 4e-5, beta1: 0.9, beta2: 0.95, eps: 1e-8 },
          actual_family: 'adamw',
          actual_config: { lr: 4e-5, beta1: 0.9, beta2: 0.95, eps: 1e-8, step: 0 },
          source: 'trainer_step_record',
          evidence_ref: ref,
        },
      ],
      initial_output: { available: true, batch_sha256: batch, output_sha256: output, evidence_ref: ref, before_first_update: true },
    };
  }

  const code_files = { 'apps/controller/src/phases/evaluation/evaluator.ts': sha256Text('evaluator'), 'libs/grading/src/grade.ts': sha256Text('grading') };
  const evaluator = {
    code_sha256: sha256Text(canonicalJson(code_files)),
    code_files,
    prompt_template: 'char renderer: {question}=',
    decoding: { temperature: 0, max_tokens: 32 },
    parser: 'libs/grading gradeCompletion',
    items: { manifest_ref: 'exchange/items.jsonl', manifest_sha256: h('exchange/items.jsonl'), count: ITEMS.length },
  };
  const id = evaluatorIdentity(evaluator);
  const acc = (m: string) => ITEMS.filter((_, i) => CORRECT[m](i)).length / ITEMS.length;
  const d = pairedHoeffding(
    obs.map((o) => o.treatment),
    obs.map((o) => o.baseline),
    expectedRun().decision,
  );
  const ref = 'exchange/files/libs/preflight/src/importance-sampling.reference.ts';
  const impl = 'exchange/files/libs/estimators/src/kernel-baseline.ts';
  const stock = 'exchange/files/apps/controller/src/phases/preflight/stock-datum.reference.ts';
  const record: ExchangeRecord = {
    correctness_preflight: {
      required: true,
      paths: [
        {
          id: 'gs1_kernel_advantage_loop',
          fixed_input: { sha256: sha256Text('fixed batch'), description: 'the fixed GRPO batch' },
          baseline_revision: `tinker-cookbook 11885f569f96d40186659802b0f8c938938bc564 (rl/data_processing.py), restated in ${stock} sha256 ${h(stock)}`,
          reference_revision: `${ref} sha256 ${h(ref)}`,
          implementation_revision: `${impl} sha256 ${h(impl)}`,
          precision: 'float64',
          normalization: 'sum over action tokens',
          errors: {
            baseline_loss: { max_abs_error: 1e-9, reference_max_abs: 10, relative_l2_error: 1e-10, cosine_similarity: 1 },
            reference_gradient: { max_abs_error: 1e-9, reference_max_abs: 1, relative_l2_error: 1e-10, cosine_similarity: 1 },
          },
        },
      ],
    },
    initialization_provenance: { version: 1, arms },
    evaluation: {
      version: 1,
      evaluators: { [id]: evaluator },
      scores: ['base', ...ARMS].map((arm) => ({ arm, metric: 'accuracy', value: acc(arm), evaluator_id: id, seed: 0, predictions_ref: `${arm}/eval.jsonl`, predictions_sha256: h(`${arm}/eval.jsonl`) })),
      comparisons: [{ metric: 'accuracy', arms: [...ARMS] }],
    },
    decision: { version: 1, observations_file: { name: 'exchange/scored-observations.jsonl', sha256: h('exchange/scored-observations.jsonl') } },
    feasibility: {
      config: { ...expectedRun().effective_config },
      effective_config: { ...expectedRun().effective_config },
      primary_endpoint: 'accuracy',
      source: ['pilot.json', 'pilot_bw1.0/gs1_kernel/steps.jsonl'],
      measurements: {
        setup: { seconds: 4, units: 1, planned_units: 1 },
        training: { seconds: 14, units: 3, planned_units: 80 },
        evaluation: { seconds: 57, units: 120, planned_units: 120 },
      },
      recovery: { seconds: 600 },
    },
    checkpoints: [
      { arm: 'shared_init', step: 0, uri: init, adapter_sha256: adapter },
      ...ARMS.map((arm) => ({ arm, step: 40, uri: `embedded://sampler/${arm}-final` })),
    ],
    per_arm_metrics: Object.fromEntries(['base', ...ARMS].map((m) => [m, { accuracy: acc(m) }])),
    verdict_report: { effect: d.effect, margin: -0.03, lower: d.lower, upper: d.upper, seeds: 1, confidence: 'weak', reasoning: 'inconclusive' },
  };
  const evidence = (): RecordEvidence => {
    const files: Record<string, RecordFile> = {};
    for (const [f, t] of Object.entries(texts)) files[f] = { sha256: sha256Text(t), text: t };
    return { files, expected: expectedRun() };
  };
  return { record, texts, evidence };
}
