// <arm>/training.json (one arm's training: checkpoints per step, final weights, dev accuracy) and training.json (the
// phase's summary: the bandwidth, each arm's file, the first-update check), both written by the training phase and
// read back on resume, by the evaluation, the record, rx export and rx report.
import { z } from 'zod';
import { jsonObject } from './json-object';
import { adapterHashSchema } from './shared-init.schema';

export const finalWeightsSchema = jsonObject({
  sampler_path: z.string(),
  /** the training state the trainer saved with the last step */
  state_path: z.string(),
  note: z.string(),
  /** the adapter of the final sampler weights (absent in runs before adapters were fetched over the wire) */
  adapter: adapterHashSchema.optional(),
});
export type FinalWeights = z.infer<typeof finalWeightsSchema>;

/** greedy accuracy on the run's fixed dev sample after so many optimizer updates */
export const devAccuracyPointSchema = jsonObject({
  updates: z.number().int().nonnegative(),
  sampler_path: z.string(),
  n: z.number().int().positive(),
  correct: z.number().int().nonnegative(),
  accuracy: z.number(),
});
export type DevAccuracyPoint = z.infer<typeof devAccuracyPointSchema>;

export const checkpointSchema = jsonObject({
  step: z.number().int().nonnegative(),
  /** the sampler weights the step sampled from (before its update) */
  sampler_path: z.string(),
  /** the training state saved after the step */
  state_path: z.string().nullable(),
  committed_at: z.string(),
  loss: z.number().nullable(),
  reward_mean: z.number().nullable(),
});

export const armTrainingSchema = jsonObject({
  arm: z.string(),
  run_id: z.string(),
  attempt: z.number().int().positive(),
  steps: z.number().int().nonnegative(),
  bandwidth: z.number().nullable(),
  checkpoints: z.array(checkpointSchema),
  final: finalWeightsSchema,
  /** after 0, 10, 20, ... updates and at the final weights (absent in runs older than the dev curve) */
  dev_accuracy: z.array(devAccuracyPointSchema).optional(),
  wall_seconds: z.number().nonnegative(),
});
export type ArmTraining = z.infer<typeof armTrainingSchema>;

/** the shared initialisation seen from the services: each arm's step-0 sampler weights give the same logprobs */
export const firstUpdateCheckSchema = jsonObject({ arms: z.record(z.string(), z.string()), identical: z.boolean() }).nullable();
export type FirstUpdateCheck = z.infer<typeof firstUpdateCheckSchema>;

export const trainingSummarySchema = jsonObject({
  bandwidth: z.number().nullable(),
  first_update_check: firstUpdateCheckSchema,
  /** arm -> its training.json, relative to the run directory */
  arms: z.record(z.string(), z.string()),
});
export type TrainingSummary = z.infer<typeof trainingSummarySchema>;

/** the training phase's result in memory: the summary with each arm's training read in */
export interface TrainingResult {
  bandwidth: number;
  arms: Record<string, ArmTraining>;
  first_update_check: FirstUpdateCheck;
}
