// What a record is checked against, from the run's spec: the arms and the optimizer each is configured with, the
// treatment and baseline, the ten settings of the feasibility projection, the wall budget, the decision rule and
// the correctness paths (revisions and tolerances).
import { baselineArm, budget, decisionRule, optimizerSettings, treatmentArm, type ExperimentSpec } from '@rx/spec';
import type { ExpectedRun } from './record-evidence';

/** the spec's optimizer name as the exchange names its family (Tinker's Adam is AdamW) */
export function optimizerFamily(name: string): string {
  return name === 'adam' ? 'adamw' : name;
}

export function expectedRunOf(spec: ExperimentSpec): ExpectedRun {
  const rule = decisionRule(spec);
  return {
    arms: spec.arms.map((a) => {
      const o = optimizerSettings(spec, a.name);
      // an arm the spec's restoration_preflight does not list has no configured betas: nothing can match them
      return { name: a.name, optimizer: { family: optimizerFamily(o.name), lr: o.lr, beta1: o.adam?.beta1 ?? NaN, beta2: o.adam?.beta2 ?? NaN, eps: o.adam?.eps ?? NaN } };
    }),
    treatment: treatmentArm(spec).name,
    baseline: baselineArm(spec).name,
    effective_config: {
      base_model: spec.base_model,
      lora_rank: spec.lora_rank,
      dataset: spec.dataset.name,
      steps: spec.steps,
      batch_size: spec.batch_size,
      max_seq_len: spec.max_seq_len,
      max_tokens: spec.feasibility.effective_config.max_tokens,
      arms: spec.arms.map((a) => a.name),
      n_examples: spec.dataset.n_examples,
      n_eval: spec.eval.n_examples,
    },
    max_wall_minutes: budget(spec).maxWallMinutes,
    decision: { alpha: rule.alpha, margin: rule.margin, bounds: [rule.bounds[0], rule.bounds[1]], weights: rule.weights, bound: rule.bound, orderSeed: rule.orderSeed },
    correctness: {
      required: spec.correctness_preflight.required,
      paths: spec.correctness_preflight.paths.map((p) => ({ id: p.id, baseline_revision: p.baseline_revision, reference_revision: p.reference_revision, tolerances: p.tolerances })),
    },
  };
}
