// evaluation.json: the evaluator's identity and each model's greedy accuracy (its eval file and that file's sha256);
// written by the evaluation phase after each model, read back by it on resume, the decision, the record, rx status
// and rx export.
import { z } from 'zod';
import { jsonObject } from './json-object';

export const decodingSettingsSchema = jsonObject({
  temperature: z.literal(0),
  max_tokens: z.number().int().positive(),
  /** max_tokens is capped at max_seq_len - prompt length */
  max_seq_len: z.number().int().positive(),
  stop_tokens: z.array(z.number().int()),
  seed: z.number().int(),
});
export type DecodingSettings = z.infer<typeof decodingSettingsSchema>;

export const modelEvaluationSchema = jsonObject({
  model: z.string(),
  sampler_path: z.string(),
  /** <model>/eval.jsonl, relative to the run directory */
  file: z.string(),
  sha256: z.string(),
  n: z.number().int().nonnegative(),
  correct: z.number().int().nonnegative(),
  accuracy: z.number(),
  format_ok_fraction: z.number(),
  wall_seconds: z.number().nonnegative(),
});
export type ModelEvaluation = z.infer<typeof modelEvaluationSchema>;

export const evaluatorSchema = jsonObject({
  code: z.record(z.string(), z.string()),
  prompt_template: jsonObject({ renderer: z.string(), example: z.string() }),
  decoding: decodingSettingsSchema,
  item_manifest_sha256: z.string(),
  items: z.number().int().nonnegative(),
});
export type EvaluatorIdentity = z.infer<typeof evaluatorSchema>;

export const evaluationSchema = jsonObject({
  evaluator_id: z.string(),
  evaluator: evaluatorSchema,
  models: z.record(z.string(), modelEvaluationSchema),
});
export type EvaluationResult = z.infer<typeof evaluationSchema>;


/** one line of <model>/eval.jsonl: one test item, greedily decoded and graded */
export const evalLineSchema = jsonObject({
  item_id: z.string(),
  correct: z.boolean(),
  /** the content of the last \boxed{}, null when there is none */
  extracted: z.string().nullable(),
  completion: z.string(),
  stop_reason: z.enum(['stop', 'length']),
  format_ok: z.boolean(),
  completion_tokens: z.number().int().nonnegative(),
});
export type EvalLine = z.infer<typeof evalLineSchema>;
