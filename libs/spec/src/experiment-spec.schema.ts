// The experiment spec format (`../shared/specs/gs1-vs-grpo.json`) as a zod schema, with the cross-field rules that
// make a spec runnable: one kernel arm and one group-mean arm, batch arithmetic, gates that agree with the arms.
import { GATE_METRIC_NAMES, SET_VALUED_GATE_METRICS } from '@rx/gates';
import { BOUND_NAMES } from '@rx/stats';
import { z } from 'zod';
import { specRevisionSchema, locateSpecPath } from './spec-revision.schema';

export const ADVANTAGE_KINDS = ['group_mean', 'kernel_cross_prompt_baseline'] as const;
export type AdvantageKind = (typeof ADVANTAGE_KINDS)[number];
/** the treatment arm is the one with this advantage; the baseline arm has `group_mean` */
export const TREATMENT_ADVANTAGE: AdvantageKind = 'kernel_cross_prompt_baseline';
export const BASELINE_ADVANTAGE: AdvantageKind = 'group_mean';

const text = z.string().min(1, 'must not be empty');
const positiveInt = z.number().int('must be an integer').positive('must be > 0');
const positive = z.number().finite().positive('must be > 0');
const nonNegative = z.number().finite().nonnegative('must be >= 0');
const seed = z.number().int('must be an integer').nonnegative('must be >= 0');

const advantageKind = z.enum(ADVANTAGE_KINDS, {
  errorMap: (issue, ctx) =>
    issue.code === 'invalid_enum_value'
      ? { message: `unknown advantage kind ${JSON.stringify(ctx.data)} (allowed: ${ADVANTAGE_KINDS.join(', ')})` }
      : { message: ctx.defaultError },
});

export const armSchema = z
  .object({
    name: z.string().regex(/^[a-z0-9][a-z0-9_-]*$/, 'must be lower-case letters, digits, _ or - (it names files and metric labels)'),
    advantage: advantageKind,
    group_size: positiveInt,
    groups_per_batch: positiveInt,
    lr: positive,
    seed,
  })
  .strict();

const gateMetric = z.enum(GATE_METRIC_NAMES, {
  errorMap: (issue, ctx) =>
    issue.code === 'invalid_enum_value'
      ? { message: `unknown gate metric ${JSON.stringify(ctx.data)} (allowed: ${GATE_METRIC_NAMES.join(', ')})` }
      : { message: ctx.defaultError },
});

export const gateCheckSchema = z
  .object({
    metric: gateMetric,
    measures: z.string(),
    one_of: z.array(z.string().regex(/^[1-9][0-9]*$/, 'must be a positive integer written as a string')).min(1, 'must list at least one value').optional(),
    min: z.number().finite().optional(),
    max: z.number().finite().optional(),
  })
  .strict()
  .superRefine((check, ctx) => {
    const setValued = SET_VALUED_GATE_METRICS.includes(check.metric);
    if (check.min !== undefined && check.max !== undefined && check.min > check.max) {
      ctx.addIssue({ code: 'custom', path: ['min'], message: `min ${check.min} is greater than max ${check.max}` });
    }
    if (setValued && check.one_of === undefined) ctx.addIssue({ code: 'custom', path: ['one_of'], message: `${check.metric} needs one_of (the allowed group sizes)` });
    if (setValued && (check.min !== undefined || check.max !== undefined)) ctx.addIssue({ code: 'custom', message: `${check.metric} takes one_of, not min/max` });
    if (!setValued && check.one_of !== undefined) ctx.addIssue({ code: 'custom', path: ['one_of'], message: `${check.metric} takes min/max, not one_of` });
    if (!setValued && check.min === undefined && check.max === undefined) ctx.addIssue({ code: 'custom', message: `${check.metric} needs a min or a max` });
  });

export const activationGateSchema = z
  .object({
    applicable: z.boolean(),
    checks: z.array(gateCheckSchema),
    reason: z.string().optional(),
  })
  .strict()
  .superRefine((gate, ctx) => {
    const seen = new Map<string, number>();
    gate.checks.forEach((c, i) => {
      const first = seen.get(c.metric);
      if (first !== undefined) ctx.addIssue({ code: 'custom', path: ['checks', i, 'metric'], message: `duplicate gate metric ${c.metric} (also checks[${first}])` });
      else seen.set(c.metric, i);
    });
  });

const criterionSchema = z
  .object({
    id: text,
    metric: text,
    bounds: z.tuple([z.number().finite(), z.number().finite()]),
    margin: z.number().finite(),
    weights: z.object({ treatment: z.number().finite(), baseline: z.number().finite() }).strict(),
  })
  .strict()
  .superRefine((c, ctx) => {
    const [lo, hi] = c.bounds;
    if (!(lo < hi)) ctx.addIssue({ code: 'custom', path: ['bounds'], message: `lower bound ${lo} must be below upper bound ${hi}` });
    const range = (hi - lo) * (Math.abs(c.weights.treatment) + Math.abs(c.weights.baseline));
    if (c.weights.treatment === 0 && c.weights.baseline === 0) ctx.addIssue({ code: 'custom', path: ['weights'], message: 'weights must not all be 0' });
    else if (lo < hi && !(Math.abs(c.margin) < range)) ctx.addIssue({ code: 'custom', path: ['margin'], message: `margin ${c.margin} must lie strictly inside (-${range}, ${range}), the range of the paired difference` });
  });

export const decisionRuleSchema = z
  .object(
    {
      alpha: z.number().gt(0, 'must be > 0').lt(1, 'must be < 1'),
      /** the confidence bound the verdict reads (default hoeffding); the others are reported as exploratory */
      bound: z
        .enum(BOUND_NAMES, {
          errorMap: (issue, ctx) =>
            issue.code === 'invalid_enum_value' ? { message: `unknown bound ${JSON.stringify(ctx.data)} (allowed: ${BOUND_NAMES.join(', ')})` } : { message: ctx.defaultError },
        })
        .optional(),
      /** the seed of the betting bound's item order (required with bound betting) */
      betting_order_seed: seed.optional(),
      criteria: z.array(criterionSchema).min(1, 'must hold at least one criterion'),
      estimand: z.string().optional(),
      method: z.literal('paired_hoeffding'),
      seeds: z.array(seed).min(1).optional(),
      unit: z.string().optional(),
      version: positiveInt.optional(),
    },
    { required_error: 'required: a spec must pre-register its decision rule' },
  )
  .strict()
  .superRefine((rule, ctx) => {
    const ids = rule.criteria.map((c) => c.id);
    ids.forEach((id, i) => {
      if (ids.indexOf(id) !== i) ctx.addIssue({ code: 'custom', path: ['criteria', i, 'id'], message: `duplicate criterion id '${id}'` });
    });
    if (!ids.includes('primary')) ctx.addIssue({ code: 'custom', path: ['criteria'], message: "no criterion with id 'primary'" });
    if (rule.bound === 'betting' && rule.betting_order_seed === undefined) {
      ctx.addIssue({ code: 'custom', path: ['betting_order_seed'], message: 'required with bound betting: the seed that fixes the order the bound takes the items in, pre-registered' });
    }
  });

const lossTolerance = z.object({ atol: nonNegative, rtol: nonNegative }).strict();
const gradientTolerance = z.object({ atol: nonNegative, rtol: nonNegative, min_cosine: z.number().min(-1).max(1) }).strict();

export const correctnessPreflightSchema = z
  .object({
    paths: z.array(
      z
        .object({
          id: text,
          kind: text,
          baseline_revision: z.string(),
          reference_revision: z.string(),
          tolerances: z
            .object({ baseline_loss: lossTolerance, baseline_gradient: gradientTolerance, reference_loss: lossTolerance, reference_gradient: gradientTolerance })
            .strict(),
        })
        .strict(),
    ),
    required: z.boolean(),
    status: z.string(),
    /** how far two copies of one state may differ in per-token logprobs and still count as the same output */
    same_output_tolerance: lossTolerance.optional(),
  })
  .strict();

export const effectiveConfigSchema = z
  .object({
    arms: z.array(text),
    base_model: text,
    batch_size: positiveInt,
    max_seq_len: positiveInt,
    max_tokens: positiveInt,
    n_eval: positiveInt,
    steps: positiveInt,
  })
  .strict();

const looseRecord = z.record(z.unknown()).nullable().optional();

const optimizerConfigSchema = z
  .object({
    beta1: z.number().min(0).lt(1),
    beta2: z.number().min(0).lt(1),
    eps: positive,
    lora_rank: positiveInt,
    lr: positive,
    seed,
  })
  .strict();

/** the spec's fields, before the cross-field rules */
export const specFieldsSchema = z
  .object({
    title: text,
    hypothesis: z.string().optional(),
    training_type: z.literal('rl').optional(),
    base_model: text,
    lora_rank: positiveInt,
    max_seq_len: positiveInt,
    batch_size: positiveInt,
    steps: positiveInt,
    arms: z.array(armSchema),
    optimizer: z.object({ name: z.enum(['adam', 'adamw']), lr: positive }).strict(),
    dataset: z.object({ name: text, hf_path: text, n_examples: positiveInt, split: text }).strict(),
    eval: z.object({ aggregation: z.string().nullable().optional(), benchmark: text, metric: text, n_examples: positiveInt }).strict(),
    budget: z
      .object({
        gpu_hours: positive,
        max_wall_minutes: positive,
        /** Tinker: sampled + prefill + trained tokens of the whole run, all arms, pilots and evaluation */
        max_tokens: positiveInt.optional(),
        /** Tinker: US dollars at the pinned price table (rx plan); needs a table entry for the model */
        max_usd: positive.optional(),
      })
      .strict(),
    decision_rule: decisionRuleSchema,
    activation_gate: activationGateSchema,
    correctness_preflight: correctnessPreflightSchema,
    feasibility: z
      .object({
        config: looseRecord,
        effective_config: effectiveConfigSchema,
        generation: looseRecord,
        measurements: looseRecord,
        primary_endpoint: z.string().nullable().optional(),
        recovery: looseRecord,
        source: z.union([z.string(), z.record(z.unknown())]).nullable().optional(),
      })
      .strict(),
    primary_endpoint: z.string().optional(),
    success_criterion: z.string().optional(),
    baseline: z.string().optional(),
    command: z.string().optional(),
    method: z.string().optional(),
    experiment_features: z.record(z.boolean()).optional(),
    feasibility_check: z.record(z.unknown()).optional(),
    feasibility_required: z.boolean().optional(),
    generation_audit: z
      .object({
        answer_comparison: z.string(),
        max_eval_overlaps: z.number().int().nonnegative(),
        max_label_errors: z.number().int().nonnegative(),
        min_sample_size: z.number().int().nonnegative(),
        required: z.boolean(),
      })
      .strict()
      .optional(),
    preflight: z.object({ probe: z.string(), riskiest_assumption: z.string(), tuning: z.string() }).strict().optional(),
    restoration_preflight: z
      .object({
        applicable: z.boolean(),
        fixed_batch_required: z.boolean(),
        groups: z.array(z.object({ arms: z.array(z.object({ name: text, optimizer: text, optimizer_config: optimizerConfigSchema }).strict()) }).strict()),
        reason: z.string().optional(),
      })
      .strict()
      .optional(),
    spec_preflight: z.object({ findings: z.array(z.unknown()), status: z.string() }).strict().optional(),
    /** present when this spec is a recorded revision of a published one */
    revision: specRevisionSchema.optional(),
  })
  .strict();

type Spec = z.infer<typeof specFieldsSchema>;

export const experimentSpecSchema = specFieldsSchema.superRefine(crossFieldRules);

export type ExperimentSpec = z.infer<typeof experimentSpecSchema>;
export type ArmSpec = z.infer<typeof armSchema>;
export type GateCheckSpec = z.infer<typeof gateCheckSchema>;

function crossFieldRules(spec: Spec, ctx: z.RefinementCtx): void {
  const issue = (path: Array<string | number>, message: string) => ctx.addIssue({ code: 'custom', path, message });

  // arms: unique names, exactly one treatment (kernel) arm and one baseline (group-mean) arm
  const names = spec.arms.map((a) => a.name);
  names.forEach((n, i) => {
    if (names.indexOf(n) !== i) issue(['arms', i, 'name'], `duplicate arm name '${n}'`);
  });
  const kernelArms = spec.arms.filter((a) => a.advantage === TREATMENT_ADVANTAGE).length;
  const groupArms = spec.arms.filter((a) => a.advantage === BASELINE_ADVANTAGE).length;
  if (spec.arms.length !== 2 || kernelArms !== 1 || groupArms !== 1) {
    issue(['arms'], `needs exactly two arms, one ${TREATMENT_ADVANTAGE} (treatment) and one ${BASELINE_ADVANTAGE} (baseline); got ${spec.arms.length} arm(s), ${kernelArms} kernel, ${groupArms} group-mean`);
  }

  const gateIndex = (metric: string) => spec.activation_gate.checks.findIndex((c) => c.metric === metric);
  spec.arms.forEach((arm, i) => {
    // rollouts per step: groups_per_batch * group_size = batch_size
    if (arm.groups_per_batch * arm.group_size !== spec.batch_size) {
      issue(['arms', i], `groups_per_batch * group_size = ${arm.groups_per_batch} * ${arm.group_size} = ${arm.groups_per_batch * arm.group_size}, not batch_size ${spec.batch_size}`);
    }
    if (arm.lr !== spec.optimizer.lr) issue(['arms', i, 'lr'], `${arm.lr} differs from optimizer.lr ${spec.optimizer.lr}`);
    // each step draws groups_per_batch fresh prompts from one shuffled order
    const prompts = spec.steps * arm.groups_per_batch;
    if (prompts > spec.dataset.n_examples) {
      issue(['dataset', 'n_examples'], `${spec.dataset.n_examples} prompts is fewer than arm '${arm.name}' draws (steps * groups_per_batch = ${spec.steps} * ${arm.groups_per_batch} = ${prompts})`);
    }
    // the executed group size gate must be able to pass for the configured group size
    const metric = arm.advantage === TREATMENT_ADVANTAGE ? 'executed_group_size_treatment' : 'executed_group_size_baseline';
    const k = gateIndex(metric);
    const allowed = k >= 0 ? spec.activation_gate.checks[k].one_of : undefined;
    if (allowed && !allowed.map(Number).includes(arm.group_size)) {
      issue(['arms', i, 'group_size'], `${arm.group_size} is not in activation_gate.checks[${k}].one_of [${allowed.join(', ')}] (${metric})`);
    }
  });

  // the effective config must describe this spec
  const eff = spec.feasibility.effective_config;
  const effPath = ['feasibility', 'effective_config'];
  const same: Array<[keyof typeof eff, unknown, string]> = [
    ['base_model', spec.base_model, 'base_model'],
    ['batch_size', spec.batch_size, 'batch_size'],
    ['max_seq_len', spec.max_seq_len, 'max_seq_len'],
    ['steps', spec.steps, 'steps'],
    ['n_eval', spec.eval.n_examples, 'eval.n_examples'],
  ];
  for (const [key, expected, where] of same) {
    if (eff[key] !== expected) issue([...effPath, key], `${JSON.stringify(eff[key])} differs from ${where} ${JSON.stringify(expected)}`);
  }
  if (JSON.stringify([...eff.arms].sort()) !== JSON.stringify([...names].sort())) issue([...effPath, 'arms'], `[${eff.arms.join(', ')}] differs from the arm names [${names.join(', ')}]`);
  if (eff.max_tokens >= spec.max_seq_len) issue([...effPath, 'max_tokens'], `${eff.max_tokens} leaves no room for the prompt within max_seq_len ${spec.max_seq_len}`);
  if (spec.primary_endpoint !== undefined && spec.feasibility.primary_endpoint != null && spec.primary_endpoint !== spec.feasibility.primary_endpoint) {
    issue(['feasibility', 'primary_endpoint'], `'${spec.feasibility.primary_endpoint}' differs from primary_endpoint '${spec.primary_endpoint}'`);
  }

  // a revision says what the spec now holds: each change's `to` is the value at its path
  // (a field the revision names but the spec lacks is reported where it is missing)
  spec.revision?.changes.forEach((c, i) => {
    const found = locateSpecPath(spec, c.path);
    if (found.missing === 'key') issue(found.at, `missing: revision.changes[${i}] sets ${c.path} to ${JSON.stringify(c.to)}`);
    else if (found.missing === 'element') issue(['revision', 'changes', i, 'path'], `${c.path} names nothing in the spec (no element of ${found.at.join('.') || 'the spec'} by that name)`);
    else if (found.value !== c.to) issue(['revision', 'changes', i, 'to'], `${JSON.stringify(c.to)} is not what the spec has at ${c.path} (${JSON.stringify(found.value)})`);
  });

  // restoration preflight: known arms, the same optimizer settings as the arms
  spec.restoration_preflight?.groups.forEach((g, gi) =>
    g.arms.forEach((ra, ai) => {
      const at = ['restoration_preflight', 'groups', gi, 'arms', ai];
      const arm = spec.arms.find((a) => a.name === ra.name);
      if (!arm) return issue([...at, 'name'], `unknown arm '${ra.name}' (arms: ${names.join(', ')})`);
      if (ra.optimizer !== spec.optimizer.name) issue([...at, 'optimizer'], `'${ra.optimizer}' differs from optimizer.name '${spec.optimizer.name}'`);
      if (ra.optimizer_config.lr !== arm.lr) issue([...at, 'optimizer_config', 'lr'], `${ra.optimizer_config.lr} differs from the arm's lr ${arm.lr}`);
      if (ra.optimizer_config.seed !== arm.seed) issue([...at, 'optimizer_config', 'seed'], `${ra.optimizer_config.seed} differs from the arm's seed ${arm.seed}`);
      if (ra.optimizer_config.lora_rank !== spec.lora_rank) issue([...at, 'optimizer_config', 'lora_rank'], `${ra.optimizer_config.lora_rank} differs from lora_rank ${spec.lora_rank}`);
    }),
  );
}
