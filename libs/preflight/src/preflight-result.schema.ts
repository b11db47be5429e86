// preflight.json: what the correctness preflight of a run checked, with its numbers; written and read back
// through this one schema (the run record exports `paths` into the exchange's correctness_preflight.paths[]).
import { z } from 'zod';

const sha256 = z.string().regex(/^[0-9a-f]{64}$/);
/** a float that may be non-finite when a check failed badly; JSON has no Infinity/NaN, so those are written as null */
const measured = z.number().nullable();

export const toleranceSchema = z.object({ atol: z.number(), rtol: z.number(), min_cosine: z.number().optional() }).strict();

/** the error measures of one comparison (named as in the exchange's correctness_preflight errors) */
export const comparisonErrorsSchema = z
  .object({ max_abs_error: measured, reference_max_abs: measured, relative_l2_error: measured, cosine_similarity: measured })
  .strict();
export type ComparisonErrors = z.infer<typeof comparisonErrorsSchema>;

export const PREFLIGHT_CHECK_IDS = [
  'baseline_advantages',
  'baseline_datums',
  'baseline_loss',
  'baseline_gradient',
  'reference_advantages',
  'reference_datums',
  'reference_loss',
  'reference_gradient',
  'backend_loss',
  'update_direction',
] as const;
export type PreflightCheckId = (typeof PREFLIGHT_CHECK_IDS)[number];

export const preflightCheckSchema = z
  .object({
    id: z.enum(PREFLIGHT_CHECK_IDS),
    /** what was compared with what */
    compared: z.string(),
    fixed_input_sha256: sha256,
    errors: comparisonErrorsSchema,
    tolerance: toleranceSchema,
    pass: z.boolean(),
    failures: z.array(z.string()),
  })
  .strict();
export type PreflightCheck = z.infer<typeof preflightCheckSchema>;

export const fixedInputSchema = z.object({ id: z.string(), sha256, description: z.string(), rollouts: z.number().int(), action_tokens: z.number().int() }).strict();
export type FixedInput = z.infer<typeof fixedInputSchema>;

/** one correctness_preflight path in the exchange's shape */
export const preflightPathSchema = z
  .object({
    id: z.string(),
    kind: z.string(),
    fixed_input: z.object({ sha256, description: z.string() }).strict(),
    baseline_revision: z.string(),
    reference_revision: z.string(),
    implementation_revision: z.string(),
    precision: z.string(),
    normalization: z.string(),
    errors: z.object({ baseline_loss: comparisonErrorsSchema, baseline_gradient: comparisonErrorsSchema, reference_loss: comparisonErrorsSchema, reference_gradient: comparisonErrorsSchema }).strict(),
  })
  .strict();
export type PreflightPath = z.infer<typeof preflightPathSchema>;

export const updateDirectionSchema = z
  .object({
    learning_rate: z.number(),
    delta_loss: measured,
    first_order_delta_loss: measured,
    predicted_delta_loss: measured,
    warm_copy_delta_loss: measured,
    linear_rel_error: measured,
    warm_copy_rel_error: measured,
    max_abs_logprob_change: measured,
    tolerances: z.object({ linear_rtol: z.number(), adam_rtol: z.number(), warm_lr_fraction: z.number() }).strict(),
    /** how copy B was made: stepped at lr 0 first, or (the service refused that step) reloaded from the saved state */
    warm_copy: z.string().optional(),
    pass: z.boolean(),
    failures: z.array(z.string()),
  })
  .strict();

export const preflightResultSchema = z
  .object({
    pass: z.boolean(),
    /** the ids of the failed checks, and one line per failure naming its check */
    failed_checks: z.array(z.string()),
    failures: z.array(z.string()),
    backend: z.string(),
    shared_init: z
      .object({
        state_path: z.string(),
        /** every backend call of the checks ran on throw-away clients loaded from the state; a fresh copy after them still gives the shared-init outputs */
        untouched: z.boolean(),
        /** the fresh copy's logprobs against the shared init's, within the same-output tolerance (absent in older runs) */
        same_output: z
          .object({
            tolerance: z.object({ atol: z.number().nonnegative(), rtol: z.number().nonnegative(), source: z.enum(['spec', 'rx default']) }).strict(),
            max_abs_diff: z.number().nonnegative().nullable(),
            pass: z.boolean(),
          })
          .strict()
          .optional(),
        note: z.string(),
      })
      .strict(),
    fixed_inputs: z.array(fixedInputSchema),
    paths: z.array(preflightPathSchema),
    checks: z.array(preflightCheckSchema),
    update_direction: updateDirectionSchema,
    /** the offline estimator checks (forced activation and non-activation) and the spec's per-arm probe */
    estimator_checks: z.record(z.unknown()),
    probe: z.array(z.record(z.unknown())),
  })
  .strict();
export type PreflightResult = z.infer<typeof preflightResultSchema>;

/** A number for JSON: non-finite values become null (the schema's `measured`). */
export function finiteOrNull(x: number): number | null {
  return Number.isFinite(x) ? x : null;
}
