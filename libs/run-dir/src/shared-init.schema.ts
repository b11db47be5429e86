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
  /** the service gave no bytes: why, in one line (absent in runs before adapters were fetched over the wire) */
  unavailable: z.string().nullable().optional(),
  /** what the service's weights_info says of the checkpoint (a training state), the evidence that stands in */
  weights_info: z.record(z.string(), z.unknown()).nullable().optional(),
});
export type AdapterHash = z.infer<typeof adapterHashSchema>;

/** A "same output" comparison: the tolerance it used (where it comes from) and the measured difference. */
export const sameOutputEvidenceSchema = jsonObject({
  tolerance: jsonObject({ atol: z.number().nonnegative(), rtol: z.number().nonnegative(), source: z.enum(['spec', 'rx default']) }),
  /** max |a - b| over the compared logprobs (null: not finite, or the shapes differ) */
  max_abs_diff: z.number().nonnegative().nullable(),
  pass: z.boolean(),
});
export type SameOutputEvidence = z.infer<typeof sameOutputEvidenceSchema>;

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
  lora: jsonObject({
    base_model: z.string(),
    rank: z.number().int().positive(),
    seed: z.number().int(),
    /** the service refused the seed at create_model: the state was created without it (why, one line) */
    seed_refused: z.string().nullable().optional(),
  }),
  fixed_batch_sha256: z.string(),
  /** the adapter in the shared state as saved */
  adapter: adapterHashSchema,
  /** per arm: sha256 of forward_backward's logprobs on the fixed batch (advantages 0: no update), and its restore */
  arms: z.record(z.string(), jsonObject({ output_sha256: z.string(), restore: armRestoreSchema })),
  /** the outputs bit for bit the same for every arm */
  identical: z.boolean(),
  /**
   * "the same output" within a stated tolerance: max |logprob_arm - logprob_first arm| over every arm and target of
   * the fixed batch, against the spec's tolerance or rx's default (absent in runs made before it existed)
   */
  same_output: sameOutputEvidenceSchema.optional(),
  /** the first arm's logprobs on the fixed batch: what later copies of the state are compared with */
  probe_logprobs: z.array(z.array(z.number())).optional(),
});
export type SharedInitResult = z.infer<typeof sharedInitSchema>;
