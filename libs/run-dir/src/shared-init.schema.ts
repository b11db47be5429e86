// shared-init.json: the one LoRA state both arms start from, and the evidence that each arm restored it (the
// shared-init phase writes it; the preflight, training, evaluation, the record and rx export read it back).
import { z } from 'zod';
import { isoTime, jsonObject } from './json-object';

/** the sha256 of the LoRA adapter in a saved training state, where the backend's bytes can be read */
export const adapterHashSchema = jsonObject({
  sha256: z.string().nullable(),
  /** where the hash comes from, or why there is none */
  source: z.string(),
  /** the optimizer's step counter in the saved state (0: no update applied) */
  optimizer_step: z.number().int().nullable(),
});
export type AdapterHash = z.infer<typeof adapterHashSchema>;

/** One arm's restore of the shared state, before any update. */
export const armRestoreSchema = jsonObject({
  loaded_state_path: z.string(),
  load_succeeded: z.boolean(),
  /** loadState calls on the arm's client before its fixed-batch output */
  restore_count: z.number().int().nonnegative(),
  /** the state saved again from the arm's client right after the load (its adapter is hashed) */
  resaved_state_path: z.string(),
  adapter: adapterHashSchema,
  loaded_at: isoTime,
});
export type ArmRestore = z.infer<typeof armRestoreSchema>;

export const sharedInitSchema = jsonObject({
  state_path: z.string(),
  sampler_path: z.string(),
  lora: jsonObject({ base_model: z.string(), rank: z.number().int().positive(), seed: z.number().int() }),
  fixed_batch_sha256: z.string(),
  /** the adapter in the shared state as saved */
  adapter: adapterHashSchema,
  /** per arm: sha256 of forward_backward's logprobs on the fixed batch (advantages 0: no update), and its restore */
  arms: z.record(z.string(), jsonObject({ output_sha256: z.string(), restore: armRestoreSchema })),
  identical: z.boolean(),
});
export type SharedInitResult = z.infer<typeof sharedInitSchema>;
