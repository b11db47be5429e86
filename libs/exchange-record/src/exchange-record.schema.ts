// The research exchange's record of one experiment run, field for field as the exchange publishes it
// (../shared/seed/published-record.txt): correctness_preflight, initialization_provenance, evaluation, decision,
// feasibility, checkpoints, per_arm_metrics, verdict_report. `rx export` writes it (exchange/record.json) and
// `rx check-record` reads it back. Fields the exchange left free-form (a revision, a prompt template) stay strings;
// what a validator needs to be checkable (a sha256, item ids) is typed, and the validators say when it is missing.
import { z } from 'zod';

const sha256 = z.string().regex(/^[0-9a-f]{64}$/, 'a lowercase hex sha256');

/** one measured error of a preflight path against its reference (what the tolerances are checked on) */
export const preflightErrorSchema = z
  .object({
    max_abs_error: z.number(),
    reference_max_abs: z.number(),
    relative_l2_error: z.number(),
    cosine_similarity: z.number(),
  })
  .passthrough();

export const preflightPathSchema = z
  .object({
    id: z.string().min(1),
    fixed_input: z.object({ sha256: z.string(), description: z.string() }).passthrough(),
    baseline_revision: z.string(),
    reference_revision: z.string(),
    implementation_revision: z.string(),
    precision: z.string(),
    normalization: z.string(),
    errors: z.record(z.string(), preflightErrorSchema),
  })
  .passthrough();

export const correctnessPreflightSchema = z.object({ required: z.boolean(), paths: z.array(preflightPathSchema) }).passthrough();

export const optimizerCheckSchema = z
  .object({
    /** which restore this check follows (1: the first) */
    after_restore: z.number().int(),
    before_next_update: z.boolean(),
    requested: z.object({ family: z.string() }).catchall(z.unknown()),
    actual_family: z.string().nullable(),
    actual_config: z.record(z.string(), z.unknown()).nullable(),
    source: z.string(),
    evidence_ref: z.string(),
  })
  .passthrough();

export const armInitializationSchema = z
  .object({
    initialization: z
      .object({
        base_checkpoint: z.string(),
        checkpoint_uri: z.string(),
        checkpoint_immutable: z.boolean(),
        checkpoint_scope: z.string(),
        loaded_checkpoint_uri: z.string().nullable(),
        load_succeeded: z.boolean(),
        adapter_sha256: z.string().nullable(),
        source: z.string(),
        evidence_ref: z.string().nullable(),
        before_first_update: z.boolean(),
      })
      .passthrough(),
    restore_count: z.number().int(),
    optimizer_checks: z.array(optimizerCheckSchema),
    initial_output: z
      .object({
        available: z.boolean(),
        batch_sha256: z.string().nullable(),
        output_sha256: z.string().nullable(),
        evidence_ref: z.string().nullable(),
        before_first_update: z.boolean(),
      })
      .passthrough(),
  })
  .passthrough();

export const initializationProvenanceSchema = z.object({ version: z.literal(1), arms: z.record(z.string(), armInitializationSchema) }).passthrough();

/** the items an evaluator scored: the ids themselves, or a manifest file of them with its hash */
export const evaluatorItemsSchema = z
  .object({
    ids: z.union([z.array(z.string()), z.string()]).optional(),
    manifest_ref: z.string().optional(),
    manifest_sha256: z.string().optional(),
    count: z.number().int().optional(),
  })
  .passthrough();

export const evaluatorSchema = z
  .object({
    code_sha256: z.string(),
    prompt_template: z.union([z.string(), z.record(z.string(), z.unknown())]),
    decoding: z.record(z.string(), z.unknown()),
    parser: z.string(),
    items: evaluatorItemsSchema,
  })
  .passthrough();

export const scoreSchema = z
  .object({
    arm: z.string(),
    metric: z.string(),
    value: z.number(),
    evaluator_id: z.string(),
    seed: z.number().int(),
    predictions_ref: z.string(),
    predictions_sha256: sha256.optional(),
  })
  .passthrough();

export const evaluationSchema = z
  .object({
    version: z.literal(1),
    evaluators: z.record(z.string(), evaluatorSchema),
    scores: z.array(scoreSchema),
    comparisons: z.array(z.object({ metric: z.string(), arms: z.array(z.string()) }).passthrough()).optional(),
  })
  .passthrough();

export const decisionSchema = z
  .object({
    version: z.literal(1),
    observations_file: z.object({ name: z.string(), sha256: z.string() }).nullable(),
  })
  .passthrough();

export const phaseMeasurementSchema = z
  .object({
    seconds: z.number(),
    units: z.number(),
    planned_units: z.number(),
    samples: z.number().nullable().optional(),
    gpu_count: z.number().nullable().optional(),
    allocation_source: z.string().nullable().optional(),
  })
  .passthrough();

export const feasibilitySchema = z
  .object({
    /** the configuration the measurements were taken at */
    config: z.record(z.string(), z.unknown()).nullable(),
    /** the configuration the projection is for (the run's) */
    effective_config: z.record(z.string(), z.unknown()).nullable(),
    primary_endpoint: z.string().nullable().optional(),
    /** where the pilot evidence lies: files of the run directory (or the exchange's free text) */
    source: z.union([z.string(), z.array(z.string())]).nullable(),
    measurements: z.record(z.string(), phaseMeasurementSchema).nullable(),
    recovery: z.object({ seconds: z.number() }).passthrough().nullable(),
    generation: z.unknown().optional(),
  })
  .passthrough();

export const checkpointSchema = z.object({ arm: z.string(), step: z.number().int(), uri: z.string() }).passthrough();

export const verdictReportSchema = z
  .object({
    effect: z.number(),
    margin: z.number(),
    lower: z.number(),
    upper: z.number(),
    seeds: z.number().int(),
    confidence: z.string(),
    reasoning: z.string(),
  })
  .passthrough();

export const exchangeRecordSchema = z
  .object({
    correctness_preflight: correctnessPreflightSchema,
    initialization_provenance: initializationProvenanceSchema,
    evaluation: evaluationSchema,
    decision: decisionSchema,
    feasibility: feasibilitySchema,
    checkpoints: z.array(checkpointSchema),
    per_arm_metrics: z.record(z.string(), z.record(z.string(), z.number())),
    verdict_report: verdictReportSchema.nullable(),
  })
  .passthrough();

export type PreflightPath = z.infer<typeof preflightPathSchema>;
export type ArmInitialization = z.infer<typeof armInitializationSchema>;
export type OptimizerCheck = z.infer<typeof optimizerCheckSchema>;
export type Evaluator = z.infer<typeof evaluatorSchema>;
export type Score = z.infer<typeof scoreSchema>;
export type PhaseMeasurement = z.infer<typeof phaseMeasurementSchema>;
export type ExchangeRecord = z.infer<typeof exchangeRecordSchema>;
