// record.json: the run's record, assembled from the files the phases wrote (the record phase writes it when the run
// ends: complete, stopped or failed); read back by rx status, rx export, rx report and a resumed run that is done.
import { z } from 'zod';
import { preflightResultSchema } from '@rx/preflight';
import { specRevisionSchema } from '@rx/spec';
import { decisionSummarySchema } from './decision.schema';
import { effectiveConfigSchema } from './effective-config.schema';
import { evaluationSchema } from './evaluation.schema';
import { isoTime, jsonObject } from './json-object';
import { pilotResultSchema } from './pilot.schema';
import { PHASES, runManifestSchema, runStateSchema, type PhaseName } from './run-state';
import { sharedInitSchema } from './shared-init.schema';
import { armTrainingSchema, firstUpdateCheckSchema } from './training.schema';

export const VERDICT_OUTCOMES = ['supported', 'inconclusive', 'refuted', 'stopped', 'failed', 'incomplete'] as const;
export type VerdictOutcome = (typeof VERDICT_OUTCOMES)[number];

export const verdictSchema = jsonObject({
  outcome: z.enum(VERDICT_OUTCOMES),
  /** one sentence per reason, the first the main one */
  reasoning: z.array(z.string()),
});
export type Verdict = z.infer<typeof verdictSchema>;

export const codeRevisionSchema = jsonObject({
  /** sha256 over the sorted list of (path, sha256) */
  tree_sha256: z.string(),
  files: z.record(z.string(), z.string()),
  file_count: z.number().int().nonnegative(),
  git: jsonObject({ commit: z.string(), dirty: z.boolean() }).nullable(),
});
export type CodeRevision = z.infer<typeof codeRevisionSchema>;

/** wall seconds per category of phases */
export const phaseSecondsSchema = z.object({
  setup: z.number(),
  preflight: z.number(),
  pilot: z.number(),
  training: z.number(),
  evaluation: z.number(),
  other: z.number(),
});
export type PhaseSeconds = z.infer<typeof phaseSecondsSchema>;

export const projectionConfigSchema = jsonObject({
  label: z.string(),
  steps: z.number(),
  n_eval: z.number(),
  /** models evaluated (base + both arms) */
  models: z.number(),
});
export type ProjectionConfig = z.infer<typeof projectionConfigSchema>;

export const feasibilitySchema = jsonObject({
  measured: phaseSecondsSchema.extend({
    total: z.number(),
    steps_trained: z.number(),
    seconds_per_step: z.number().nullable(),
    items_evaluated: z.number(),
    seconds_per_eval_item: z.number().nullable(),
  }),
  budget: jsonObject({ max_wall_minutes: z.number(), gpu_hours: z.number() }),
  projections: z.array(projectionConfigSchema.extend({ wall_minutes: z.number().nullable(), within_wall_budget: z.boolean().nullable() })),
  gpu_hours: jsonObject({ projected: z.number().nullable(), basis: z.string() }),
  within_budget: z.boolean().nullable(),
});
export type Feasibility = z.infer<typeof feasibilitySchema>;

/** the parts of the spec registered before anything was observed */
export const PREDICTION_FIELDS = ['hypothesis', 'primary_endpoint', 'success_criterion', 'decision_rule', 'activation_gate', 'arms', 'steps', 'batch_size', 'eval'] as const;

const wallSecondsByPhase = Object.fromEntries(PHASES.map((p) => [p, z.number().optional()])) as Record<PhaseName, z.ZodOptional<z.ZodNumber>>;

export const runRecordSchema = jsonObject({
  version: z.literal(1),
  run_id: z.string(),
  title: z.string(),
  status: runStateSchema.shape.status,
  created_at: isoTime,
  recorded_at: isoTime,
  verdict: verdictSchema,
  spec: runManifestSchema.shape.spec.extend({ override: runManifestSchema.shape.override, file: z.string() }),
  /** the spec's recorded revision of a published spec, null when none */
  revision: specRevisionSchema.nullable(),
  backend: runManifestSchema.shape.backend,
  services: runManifestSchema.shape.services,
  effective_config: effectiveConfigSchema.nullable(),
  correctness_preflight: preflightResultSchema.nullable(),
  shared_initialisation: sharedInitSchema.nullable(),
  gates: pilotResultSchema.nullable(),
  training: jsonObject({ bandwidth: z.number().nullable(), arms: z.record(z.string(), armTrainingSchema), first_update_check: firstUpdateCheckSchema }).nullable(),
  evaluation: evaluationSchema.nullable(),
  decision: decisionSummarySchema.nullable(),
  code_revision: codeRevisionSchema,
  /** code revisions of earlier attempts that differ from this one (a resumed run whose code changed) */
  code_changed_between_attempts: z.boolean(),
  predictions: jsonObject({ sha256: z.string(), fields: z.array(z.string()).readonly() }),
  observations: jsonObject({ sha256: z.string(), files: z.record(z.string(), z.string()) }),
  /** seconds per phase (state.json's wallSeconds) and by category */
  wall_seconds: z.object({ ...wallSecondsByPhase, by_category: phaseSecondsSchema }),
  feasibility: feasibilitySchema,
  attempts: runStateSchema.shape.attempts,
  environment: jsonObject({ node: z.string(), platform: z.string(), arch: z.string(), cpus: z.number() }),
});
export type RunRecord = z.infer<typeof runRecordSchema>;
