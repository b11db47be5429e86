// pilot.json (every pilot of the run and the bandwidth chosen) and pilot_bw<h>[_FAILED_<gate>]/gate-report.json (one
// pilot's report): written by the pilot phase, read back by the training phase on resume, the record, rx status and
// rx report.
import { z } from 'zod';
import { GATE_METRIC_NAMES, type GateMetrics, type GateReport } from '@rx/gates';
import { jsonObject } from './json-object';

const gateMetricName = z.enum(GATE_METRIC_NAMES);
const gateValue = z.union([z.number(), z.array(z.number()), z.null()]);

export const gateResultSchema = jsonObject({
  metric: gateMetricName,
  measures: z.string(),
  /** a set for the executed group sizes; null when it could not be computed */
  value: gateValue,
  bound: jsonObject({ one_of: z.array(z.number()).optional(), min: z.number().optional(), max: z.number().optional() }),
  /** the bound in words: "in {1}", ">= 8", "in [0.1, 0.9]" */
  boundText: z.string(),
  pass: z.boolean(),
  failedBy: z.number().nullable(),
  offending: z.array(z.number()),
  detail: z.string(),
});

/** @rx/gates' GateReport as written to a run directory */
export const gateReportSchema: z.ZodType<GateReport, z.ZodTypeDef, unknown> = jsonObject({
  applicable: z.boolean(),
  pass: z.boolean(),
  results: z.array(gateResultSchema),
  failed: z.array(gateMetricName),
});

/** @rx/gates' GateMetrics as written to a run directory */
export const gateMetricsSchema: z.ZodType<GateMetrics, z.ZodTypeDef, unknown> = jsonObject({
  executed_group_size_treatment: z.array(z.number()),
  executed_group_size_baseline: z.array(z.number()),
  pilot_mean_reward: z.number().nullable(),
  kernel_effective_neighbors_p10: z.number().nullable(),
  frac_nonzero_advantage_treatment: z.number().nullable(),
  baseline_reward_corr: z.number().nullable(),
  missing: z.record(gateMetricName, z.string()),
  counts: jsonObject({
    treatmentRollouts: z.number(),
    baselineRollouts: z.number(),
    pilotSteps: z.array(z.number()),
    corrPairs: z.number(),
    heldoutPrompts: z.number(),
    heldoutUnmatched: z.number(),
    heldoutSamplesPerPrompt: z.array(z.number()),
  }),
});

/** one pilot at one bandwidth: pilot.json's pilots[i], and the pilot directory's gate-report.json */
export const pilotReportSchema = jsonObject({
  bandwidth: z.number(),
  run_id: z.string(),
  /** the pilot's directory in the run (pilot_bw0.5, or pilot_bw0.5_FAILED_ess once the calibration moved it) */
  dir: z.string(),
  treatment_steps: z.number().int().nonnegative(),
  baseline_steps: z.number().int().nonnegative(),
  /** where the baseline step and the held-out rewards came from (a calibration pilot reuses both) */
  baseline_from: z.string(),
  heldout_from: z.string(),
  metrics: gateMetricsSchema,
  report: gateReportSchema,
  lines: z.array(z.string()),
  wall_seconds: z.number().nonnegative(),
});
export type PilotReport = z.infer<typeof pilotReportSchema>;

export const pilotResultSchema = jsonObject({
  pre_registered_bandwidth: z.number(),
  /** the bandwidth the arms train with; null when the gates failed */
  chosen_bandwidth: z.number().nullable(),
  pass: z.boolean(),
  pilots: z.array(pilotReportSchema),
  calibration: jsonObject({
    ran: z.boolean(),
    reason: z.string(),
    candidates: z.array(z.number()),
    cap_steps: z.number(),
    cap_minutes: z.number(),
    wall_seconds: z.number().nonnegative(),
  }).nullable(),
  failed_logs: z.array(z.string()),
  stop_reason: z.string().nullable(),
});
export type PilotResult = z.infer<typeof pilotResultSchema>;
