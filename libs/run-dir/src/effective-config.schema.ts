// effective-config.json: everything that decides what the run executes, in one file (the effective-config phase
// writes it; the record embeds it, rx report reads the arms and the rule from it when spec.json is missing).
import { z } from 'zod';
import { jsonObject } from './json-object';

export const effectiveConfigSchema = jsonObject({
  run_id: z.string(),
  spec_sha256: z.string(),
  title: z.string(),
  base_model: z.string(),
  lora_rank: z.number().int().positive(),
  steps: z.number().int().positive(),
  batch_size: z.number().int().positive(),
  max_seq_len: z.number().int().positive(),
  arms: z.array(jsonObject({ name: z.string().min(1), advantage: z.string() })).min(1),
  sampling: jsonObject({ maxTokens: z.number().int().positive() }),
  data: jsonObject({ dataset: jsonObject({ name: z.string() }), n_train: z.number().int().nonnegative(), n_test: z.number().int().nonnegative() }),
  backend: z.enum(['embedded', 'tinker']),
  services: z.enum(['spawn', 'external']),
  /** the run's one tokenizer file (a Hugging Face base model; null for the embedded character model): path, sha256, revision, rx's pin */
  tokenizer: jsonObject({
    path: z.string(),
    sha256: z.string().regex(/^[0-9a-f]{64}$/),
    source: z.enum(['RX_TOKENIZER_PATH', 'cache']),
    revision: z.string().nullable(),
    pin: jsonObject({ hubModel: z.string(), revision: z.string(), sha256: z.string() }).nullable(),
    matches_pin: z.boolean().nullable(),
  })
    .nullable()
    .optional(),
  /** written by the shared initialisation when the service refused the spec's seed at create_model */
  lora_seed: jsonObject({ requested: z.number().int(), sent: z.boolean(), refusal: z.string().nullable() }).optional(),
});
export type EffectiveConfig = z.infer<typeof effectiveConfigSchema>;
