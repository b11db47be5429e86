// The one interface behind which every model lives: the Tinker service for real runs (TinkerBackend, over HTTP)
// and the embedded CPU transformer (in-process EmbeddedBackend, or the same behind apps/policy-server over HTTP).
// Shapes follow the Tinker SDK (create_lora_training_client, forward_backward, optim_step,
// save_weights_for_sampler, sample, compute_logprobs) in camelCase TypeScript.

/** One training example as Tinker's Datum for loss_fn='importance_sampling': aligned per target position. */
export interface Datum {
  /** model input tokens: prompt + completion without the last token */
  inputTokens: number[];
  /** next-token targets: prompt + completion without the first token (same length as inputTokens) */
  targetTokens: number[];
  /** sampling-policy logprob of each target token; 0 on prompt positions */
  samplingLogprobs: number[];
  /** advantage of each target token; 0 on prompt positions, the completion's advantage on completion positions */
  advantages: number[];
}

export type LossFn = 'importance_sampling';

export interface ForwardBackwardResult {
  /** loss summed over datums and positions: -sum exp(logp - logp_sampled) * A */
  loss: number;
  /** training-policy logprob of each target token, per datum (same length as targetTokens) */
  logprobs: number[][];
}

/** AdamW hyper-parameters (Tinker AdamParams). */
export interface AdamParams {
  learningRate: number;
  beta1: number;
  beta2: number;
  eps: number;
  weightDecay?: number;
}

export interface SampleParams {
  maxTokens: number;
  /** 0 means greedy decoding */
  temperature: number;
  /** stop token ids: sampling ends after emitting one (the stop token is kept in tokens) */
  stopTokens?: number[];
  seed?: number;
}

export interface SampledSequence {
  tokens: number[];
  /** sampling-policy logprob of each sampled token */
  logprobs: number[];
  stopReason: 'stop' | 'length';
}

export interface LoraConfig {
  baseModel: string;
  rank: number;
  seed: number;
}

/** How long a saved checkpoint is kept (Tinker's ttl_seconds; absent: until deleted). Local backends keep all. */
export interface SaveOptions {
  ttlSeconds?: number;
}

export interface TrainingClient {
  readonly modelId: string;
  /** set when the backend refused the config's seed and created the model without it (why, one line) */
  readonly seedRefused?: string | null;
  forwardBackward(datums: Datum[], lossFn: LossFn): Promise<ForwardBackwardResult>;
  optimStep(params: AdamParams): Promise<{ step: number }>;
  /** Saves the current weights for sampling; returns a path such as `tinker://…` or `embedded://…`. */
  saveWeightsForSampler(name: string, options?: SaveOptions): Promise<string>;
  /** Saves weights and optimizer state (resumable); returns its path. */
  saveState(name: string, options?: SaveOptions): Promise<string>;
  /** Loads weights and optimizer state saved by saveState (shared initialisation of both arms). */
  loadState(path: string): Promise<void>;
  /** Forward pass only: forwardBackward's loss and logprobs, with no gradient accumulated (Tinker's forward). */
  forward?(datums: Datum[], lossFn: LossFn): Promise<ForwardBackwardResult>;
  /** Loads the weights of a saveState checkpoint and starts the optimizer afresh (Tinker's load_state). */
  loadWeights?(path: string): Promise<void>;
  /** Frees the model on the service (Tinker's unload_model); its saved checkpoints stay. The client is done after it. */
  unload?(): Promise<void>;
}

export interface SamplingClient {
  readonly modelPath: string;
  sample(promptTokens: number[], numSamples: number, params: SampleParams): Promise<SampledSequence[]>;
  /** Logprob of each token given the ones before it; the first entry is null. */
  computeLogprobs(tokens: number[]): Promise<(number | null)[]>;
  /**
   * Both in one backend request where the backend can (Tinker's asample with prompt_logprobs): the completions,
   * and the prompt's logprobs under the same weights (as computeLogprobs gives them).
   */
  sampleWithPromptLogprobs?(promptTokens: number[], numSamples: number, params: SampleParams): Promise<SampledWithPromptLogprobs>;
}

export interface SampledWithPromptLogprobs {
  sequences: SampledSequence[];
  /** the first entry is null */
  promptLogprobs: (number | null)[];
}

/** What a base model accepts: checked by a server before it runs a request (400 instead of a failed future). */
export interface ModelLimits {
  vocabSize: number;
  /** most tokens one sequence may hold */
  contextLength: number;
  maxLoraRank: number;
}

/** One tensor of a LoRA adapter, as a checkpoint archive holds it (adapter_model.safetensors). */
export interface AdapterTensor {
  name: string;
  dtype: 'F32' | 'F64';
  shape: number[];
  data: Float32Array | Float64Array;
}

/** The LoRA adapter in a saved checkpoint (a training state or sampler weights), for its archive. */
export interface AdapterWeights {
  tensors: AdapterTensor[];
  baseModel: string;
  rank: number;
  alpha: number | null;
  /** the optimizer's step counter in a training state (null for sampler weights) */
  optimizerStep: number | null;
}

export interface PolicyBackend {
  readonly kind: 'embedded' | 'tinker';
  /** The adapter of a checkpoint this backend saved (its own path, from saveState or saveWeightsForSampler). */
  adapterWeights?(path: string): Promise<AdapterWeights>;
  /** The limits of `baseModel`; throws an error with `category: 'user'` for a base model it does not serve. */
  modelLimits?(baseModel: string): Promise<ModelLimits>;
  createLoraTrainingClient(config: LoraConfig): Promise<TrainingClient>;
  createSamplingClient(modelPath: string): Promise<SamplingClient>;
  /** The base models createLoraTrainingClient accepts, when the backend knows them (get_server_capabilities). */
  supportedModels?(): string[];
  /** Answers when the backend is reachable (health checks). */
  ping(): Promise<boolean>;
  close(): Promise<void>;
}
