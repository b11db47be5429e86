// The JSON shapes of the Tinker HTTP API (the form the `tinker` Python SDK spoke up to 0.24.x, and the shape
// wire/tinker-proto.ts maps the 0.25 protobuf messages to; see
// ../shared/notes/tinker-protocol.md §5), as zod schemas shared by the TypeScript client (TinkerBackend) and
// the local protocol-compatible server (apps/policy-server). Requests omit null fields; responses may carry
// fields we do not know, which zod strips.
import { z } from 'zod';

/**
 * SDK version reported in client/config and create_session: the official SDK whose wire this client speaks
 * (protobuf forward_backward and results, sampling sessions, JWT, its retry rules), checked against SDK 0.25.0.
 */
export const TINKER_WIRE_SDK_VERSION = '0.25.0';
export const TINKER_API_PREFIX = '/api/v1';

const tokenId = z.number().int().nonnegative();

export const tensorDataSchema = z.object({
  data: z.array(z.number()),
  dtype: z.enum(['int64', 'float32']),
  shape: z.array(z.number().int().nonnegative()).optional(),
  sparse_crow_indices: z.array(z.number().int().nonnegative()).optional(),
  sparse_col_indices: z.array(z.number().int().nonnegative()).optional(),
});
export type TensorData = z.infer<typeof tensorDataSchema>;

export const encodedTextChunkSchema = z.object({ type: z.literal('encoded_text'), tokens: z.array(tokenId) });
export const modelInputChunkSchema = z.discriminatedUnion('type', [
  encodedTextChunkSchema,
  z.object({ type: z.literal('image'), data: z.string(), format: z.string() }).passthrough(),
  z.object({ type: z.literal('image_asset_pointer'), format: z.string(), location: z.string() }).passthrough(),
  z.object({ type: z.literal('dmel'), dmel: z.string() }).passthrough(),
]);
export type ModelInputChunk = z.infer<typeof modelInputChunkSchema>;
export const modelInputSchema = z.object({ chunks: z.array(modelInputChunkSchema) });
export type ModelInput = z.infer<typeof modelInputSchema>;

export const wireDatumSchema = z.object({
  model_input: modelInputSchema,
  loss_fn_inputs: z.record(z.string(), tensorDataSchema),
});
export type WireDatum = z.infer<typeof wireDatumSchema>;

export const lossFnTypeSchema = z.enum(['cross_entropy', 'importance_sampling', 'ppo', 'cispo', 'dro']);

// ---- startup and session ----
export const clientConfigRequestSchema = z.object({ sdk_version: z.string() });
export const clientConfigResponseSchema = z
  .object({
    pjwt_auth_enabled: z.boolean().optional(),
    fwdbwd_max_chunk_len: z.number().int().positive().optional(),
    fwdbwd_max_chunk_bytes_count: z.number().int().positive().optional(),
    proto_compress_fwdbwd: z.boolean().optional(),
    billing_exception_max_pause_duration_sec: z.number().positive().optional(),
  })
  .passthrough();
export type ClientConfigResponse = z.infer<typeof clientConfigResponseSchema>;

export const createSessionRequestSchema = z.object({
  tags: z.array(z.string()).default([]),
  user_metadata: z.record(z.string(), z.string()).default({}),
  sdk_version: z.string(),
  project_id: z.string().optional(),
  type: z.literal('create_session').optional(),
});
export const createSessionResponseSchema = z.object({
  session_id: z.string().min(1),
  info_message: z.string().nullish(),
  warning_message: z.string().nullish(),
  error_message: z.string().nullish(),
});
export const sessionHeartbeatRequestSchema = z.object({
  session_id: z.string().min(1),
  type: z.literal('session_heartbeat').optional(),
});

// ---- futures ----
export const untypedApiFutureSchema = z.object({ request_id: z.string().min(1), model_id: z.string().nullish() });
export type UntypedApiFuture = z.infer<typeof untypedApiFutureSchema>;
export const retrieveFutureRequestSchema = z.object({
  request_id: z.string().min(1),
  allow_metadata_only: z.boolean().default(false),
});
export const tryAgainResponseSchema = z.object({
  type: z.literal('try_again'),
  request_id: z.string(),
  queue_state: z.string().optional(),
  queue_state_reason: z.string().nullish(),
});
export const requestErrorCategorySchema = z.enum(['unknown', 'server', 'user']);
export type RequestErrorCategory = z.infer<typeof requestErrorCategorySchema>;
export const requestFailedResponseSchema = z.object({ error: z.string(), category: requestErrorCategorySchema });
export type RequestFailedResponse = z.infer<typeof requestFailedResponseSchema>;
/** The value of `X-Tinker-Request-Type` on retrieve_future polls. */
export type TinkerRequestType =
  | 'CreateModel'
  | 'ForwardBackward'
  | 'Forward'
  | 'OptimStep'
  | 'SaveWeights'
  | 'LoadWeights'
  | 'SaveWeightsForSampler'
  | 'Sample'
  // unload_model's poll: not among the types the SDK 0.25 notes list; the value only labels the poll
  | 'UnloadModel';

// ---- training ----
export const loraConfigSchema = z.object({
  rank: z.number().int().positive(),
  seed: z.number().int().nullish(),
  train_unembed: z.boolean().default(true),
  train_mlp: z.boolean().default(true),
  train_attn: z.boolean().default(true),
});
export const createModelRequestSchema = z.object({
  session_id: z.string().min(1),
  model_seq_id: z.number().int().nonnegative(),
  base_model: z.string().min(1),
  lora_config: loraConfigSchema,
  user_metadata: z.record(z.string(), z.string()).nullish(),
  type: z.literal('create_model').optional(),
});
export const createModelResponseSchema = z.object({ model_id: z.string().min(1) });
export const unloadModelResponseSchema = z.object({ model_id: z.string().min(1) }).passthrough();

export const forwardBackwardRequestSchema = z.object({
  model_id: z.string().min(1),
  seq_id: z.number().int().positive(),
  forward_backward_input: z.object({
    data: z.array(wireDatumSchema),
    loss_fn: lossFnTypeSchema,
    loss_fn_config: z.record(z.string(), z.number()).nullish(),
  }),
});
export type ForwardBackwardRequest = z.infer<typeof forwardBackwardRequestSchema>;
/** forward (forward pass only) as SDKs up to 0.24.1 send it; 0.25 sends a ForwardBackwardRequest protobuf with forward_only */
export const forwardRequestSchema = z.object({
  model_id: z.string().min(1),
  seq_id: z.number().int().positive(),
  forward_input: forwardBackwardRequestSchema.shape.forward_backward_input,
});
export const forwardBackwardOutputSchema = z.object({
  loss_fn_output_type: z.string().optional(),
  loss_fn_outputs: z.array(z.record(z.string(), tensorDataSchema)),
  metrics: z.record(z.string(), z.number()).default({}),
});
export type ForwardBackwardOutput = z.infer<typeof forwardBackwardOutputSchema>;

export const adamParamsSchema = z.object({
  // >= 0 as torch's AdamW takes it: the preflight's warm copy steps once at lr 0 (moments advance, weights stay)
  learning_rate: z.number().min(0),
  beta1: z.number().min(0).lt(1),
  beta2: z.number().min(0).lt(1),
  eps: z.number().positive(),
  weight_decay: z.number().min(0).default(0),
  grad_clip_norm: z.number().min(0).default(0),
});
export const optimStepRequestSchema = z.object({
  model_id: z.string().min(1),
  seq_id: z.number().int().positive(),
  adam_params: adamParamsSchema,
  type: z.literal('optim_step').optional(),
});
export const optimStepResponseSchema = z.object({ metrics: z.record(z.string(), z.number()).nullish() });

export const saveWeightsRequestSchema = z.object({
  model_id: z.string().min(1),
  seq_id: z.number().int().positive(),
  path: z.string().min(1).nullish(),
  ttl_seconds: z.number().int().positive().nullish(),
  overwrite: z.boolean().default(false),
  type: z.literal('save_weights').optional(),
});
export const saveWeightsResponseSchema = z.object({ path: z.string().min(1) });

export const saveWeightsForSamplerRequestSchema = z.object({
  model_id: z.string().min(1),
  seq_id: z.number().int().positive(),
  path: z.string().min(1).nullish(),
  sampling_session_seq_id: z.number().int().nonnegative().nullish(),
  ttl_seconds: z.number().int().positive().nullish(),
  type: z.literal('save_weights_for_sampler').optional(),
});
export const saveWeightsForSamplerResponseSchema = z.object({
  path: z.string().nullish(),
  sampling_session_id: z.string().nullish(),
});

export const loadWeightsRequestSchema = z.object({
  path: z.string().min(1),
  optimizer: z.boolean().default(false),
  model_id: z.string().min(1).nullish(),
  seq_id: z.number().int().positive().nullish(),
  type: z.literal('load_weights').optional(),
});
export const loadWeightsResponseSchema = z.object({ path: z.string().nullish() });

// ---- sampling ----
export const createSamplingSessionRequestSchema = z.object({
  session_id: z.string().min(1),
  sampling_session_seq_id: z.number().int().nonnegative(),
  base_model: z.string().nullish(),
  model_path: z.string().nullish(),
  type: z.literal('create_sampling_session').optional(),
});
export const createSamplingSessionResponseSchema = z.object({ sampling_session_id: z.string().min(1) });

export const samplingParamsSchema = z.object({
  max_tokens: z.number().int().positive().nullish(),
  seed: z.number().int().nonnegative().nullish(),
  stop: z.union([z.string(), z.array(z.string()), z.array(tokenId)]).nullish(),
  temperature: z.number().min(0).default(1),
  top_k: z.number().int().default(-1),
  top_p: z.number().gt(0).max(1).default(1),
});
export const sampleRequestSchema = z.object({
  sampling_session_id: z.string().min(1).nullish(),
  base_model: z.string().nullish(),
  model_path: z.string().nullish(),
  seq_id: z.number().int().nonnegative().nullish(),
  num_samples: z.number().int().positive().default(1),
  prompt: modelInputSchema,
  sampling_params: samplingParamsSchema,
  prompt_logprobs: z.boolean().nullish(),
  topk_prompt_logprobs: z.number().int().nonnegative().default(0),
  type: z.literal('sample').optional(),
});
export type SampleRequest = z.input<typeof sampleRequestSchema>;
export const wireSampledSequenceSchema = z.object({
  stop_reason: z.enum(['stop', 'length']),
  tokens: z.array(tokenId),
  logprobs: z.array(z.number()).nullish(),
});
export const sampleResponseSchema = z.object({
  sequences: z.array(wireSampledSequenceSchema),
  prompt_logprobs: z.array(z.number().nullable()).nullish(),
  prompt_cache_hit_tokens: z.number().int().optional(),
  type: z.literal('sample').optional(),
});
export type SampleResponse = z.infer<typeof sampleResponseSchema>;

export const healthResponseSchema = z.object({ status: z.string() });

// ---- checkpoints, capabilities, auth ----
export const weightsInfoRequestSchema = z.object({ tinker_path: z.string().min(1) });
export const weightsInfoResponseSchema = z.object({
  base_model: z.string().min(1),
  is_lora: z.boolean(),
  lora_rank: z.number().int().positive().nullish(),
  train_unembed: z.boolean().nullish(),
  train_mlp: z.boolean().nullish(),
  train_attn: z.boolean().nullish(),
});
export type WeightsInfo = z.infer<typeof weightsInfoResponseSchema>;
/** GET training_runs/{id}/checkpoints/{kind}/{name}/archive answered 200 (the SDK's "future" contract; else a 302) */
export const checkpointArchiveUrlResponseSchema = z.object({ url: z.string().min(1), expires: z.union([z.string(), z.number()]).nullish() });
export const getServerCapabilitiesResponseSchema = z.object({
  supported_models: z.array(
    z.object({
      model_name: z.string().nullish(),
      max_context_length: z.number().int().nullish(),
      /** rx's policy server adds the largest LoRA rank it accepts (SDK 0.25 has no such field and ignores it) */
      max_lora_rank: z.number().int().positive().nullish(),
    }),
  ),
});
export type ServerCapabilities = z.infer<typeof getServerCapabilitiesResponseSchema>;
export const authTokenResponseSchema = z.object({ jwt: z.string().min(1) });
