// A small deterministic PolicyBackend for tests: a trainable bigram model (logits W[prev][next]) with the
// importance-sampling loss, AdamW, saved states and seeded sampling, all in plain float64 TypeScript. It
// behaves like a real backend (gradients accumulate until optimStep, logprobs of sampling match training)
// but is tiny and fast. Hooks (delays, injected failures, call counts) serve protocol tests.
import { mulberry32 } from '@rx/stats';
import type {
  AdamParams,
  AdapterWeights,
  Datum,
  ForwardBackwardResult,
  LoraConfig,
  LossFn,
  ModelLimits,
  PolicyBackend,
  SampleParams,
  SampledSequence,
  SamplingClient,
  TrainingClient,
} from '@rx/backend';

export type InMemoryOp =
  | 'createLoraTrainingClient'
  | 'forwardBackward'
  | 'optimStep'
  | 'saveWeightsForSampler'
  | 'saveState'
  | 'loadState'
  | 'forward'
  | 'loadWeights'
  | 'createSamplingClient'
  | 'sample'
  | 'computeLogprobs';

export interface InMemoryPolicyBackendOptions {
  /** vocabulary size (default 32) */
  vocabSize?: number;
  /** base models served (default ['rx-test/bigram']) */
  baseModels?: string[];
  /** extra milliseconds each operation takes (simulates a slow model) */
  opDelayMs?: number;
  /** most tokens of one sequence (default 4096) and largest LoRA rank (default 256) announced by modelLimits */
  contextLength?: number;
  maxLoraRank?: number;
}

/** An error the caller caused (bad input, unknown path): servers report it with category 'user'. */
export class InMemoryBackendUserError extends Error {
  override readonly name = 'InMemoryBackendUserError';
  readonly category = 'user' as const;
}

interface Weights {
  vocabSize: number;
  w: Float64Array;
}

interface TrainingState extends Weights {
  m: Float64Array;
  v: Float64Array;
  step: number;
}

// logsoftmax_j(x / T) = x_j / T - log sum_k exp(x_k / T)
function logSoftmaxRow(w: Float64Array, row: number, v: number, temperature: number): Float64Array {
  const out = new Float64Array(v);
  let max = -Infinity;
  for (let j = 0; j < v; j++) max = Math.max(max, w[row * v + j]! / temperature);
  let sum = 0;
  for (let j = 0; j < v; j++) sum += Math.exp(w[row * v + j]! / temperature - max);
  const lse = max + Math.log(sum);
  for (let j = 0; j < v; j++) out[j] = w[row * v + j]! / temperature - lse;
  return out;
}

export class InMemoryPolicyBackend implements PolicyBackend {
  readonly kind = 'embedded' as const;
  readonly vocabSize: number;
  readonly baseModels: string[];
  readonly calls: Record<InMemoryOp, number> = {
    createLoraTrainingClient: 0,
    forwardBackward: 0,
    optimStep: 0,
    saveWeightsForSampler: 0,
    saveState: 0,
    loadState: 0,
    forward: 0,
    loadWeights: 0,
    createSamplingClient: 0,
    sample: 0,
    computeLogprobs: 0,
  };
  opDelayMs: number;
  readonly contextLength: number;
  readonly maxLoraRank: number;
  private readonly failures = new Map<InMemoryOp, Error[]>();
  private readonly samplerWeights = new Map<string, Weights>();
  private readonly states = new Map<string, TrainingState>();
  private modelCount = 0;
  private closed = false;

  constructor(options: InMemoryPolicyBackendOptions = {}) {
    this.vocabSize = options.vocabSize ?? 32;
    this.baseModels = options.baseModels ?? ['rx-test/bigram'];
    this.opDelayMs = options.opDelayMs ?? 0;
    this.contextLength = options.contextLength ?? 4096;
    this.maxLoraRank = options.maxLoraRank ?? 256;
  }

  async modelLimits(baseModel: string): Promise<ModelLimits> {
    this.checkBaseModel(baseModel);
    return { vocabSize: this.vocabSize, contextLength: this.contextLength, maxLoraRank: this.maxLoraRank };
  }

  private checkBaseModel(baseModel: string): void {
    if (!this.baseModels.includes(baseModel)) {
      throw new InMemoryBackendUserError(`unknown base model '${baseModel}'; this backend serves: ${this.baseModels.join(', ')}`);
    }
  }

  /** The next call of `op` throws `error` (queued: call several times for several failures). */
  failNext(op: InMemoryOp, error: Error): void {
    const queue = this.failures.get(op) ?? [];
    queue.push(error);
    this.failures.set(op, queue);
  }

  /** Counts the call, waits opDelayMs, throws an injected failure if one is queued. */
  async enter(op: InMemoryOp): Promise<void> {
    if (this.closed) throw new Error(`InMemoryPolicyBackend.${op}: the backend is closed`);
    this.calls[op]++;
    if (this.opDelayMs > 0) await new Promise((r) => setTimeout(r, this.opDelayMs));
    const injected = this.failures.get(op)?.shift();
    if (injected) throw injected;
  }

  async createLoraTrainingClient(config: LoraConfig): Promise<InMemoryTrainingClient> {
    await this.enter('createLoraTrainingClient');
    this.checkBaseModel(config.baseModel);
    if (!Number.isInteger(config.rank) || config.rank < 1) throw new InMemoryBackendUserError(`rank must be a positive integer (got ${config.rank})`);
    const v = this.vocabSize;
    const rand = mulberry32(config.seed);
    const w = new Float64Array(v * v);
    // Box-Muller: w = 0.5 * sqrt(-2 ln u1) cos(2 pi u2)
    for (let i = 0; i < w.length; i++) w[i] = 0.5 * Math.sqrt(-2 * Math.log(1 - rand())) * Math.cos(2 * Math.PI * rand());
    const id = `memory-model-${this.modelCount++}`;
    return new InMemoryTrainingClient(this, id, { vocabSize: v, w, m: new Float64Array(v * v), v: new Float64Array(v * v), step: 0 });
  }

  async createSamplingClient(modelPath: string): Promise<SamplingClient> {
    await this.enter('createSamplingClient');
    const weights = this.samplerWeights.get(modelPath);
    if (!weights) throw new InMemoryBackendUserError(`no sampler weights at '${modelPath}'`);
    return new InMemorySamplingClient(this, modelPath, weights);
  }

  supportedModels(): string[] {
    return [...this.baseModels];
  }

  async ping(): Promise<boolean> {
    return !this.closed;
  }

  async close(): Promise<void> {
    this.closed = true;
  }

  storeSamplerWeights(path: string, weights: Weights): void {
    this.samplerWeights.set(path, { vocabSize: weights.vocabSize, w: Float64Array.from(weights.w) });
  }

  storeState(path: string, state: TrainingState): void {
    this.states.set(path, copyState(state));
  }

  /** The bigram weights of a saved state or sampler weights, as one float64 tensor (a state with its optimizer step). */
  async adapterWeights(path: string): Promise<AdapterWeights> {
    const state = this.states.get(path);
    const weights = state ?? this.samplerWeights.get(path);
    if (!weights) throw new InMemoryBackendUserError(`no checkpoint at '${path}'`);
    const v = weights.vocabSize;
    return { tensors: [{ name: 'bigram.w', dtype: 'F64', shape: [v, v], data: Float64Array.from(weights.w) }], baseModel: this.baseModels[0]!, rank: 1, alpha: null, optimizerStep: state ? state.step : null };
  }

  loadStoredState(path: string): TrainingState {
    const state = this.states.get(path);
    if (!state) throw new InMemoryBackendUserError(`no training state at '${path}'`);
    return copyState(state);
  }

  checkTokens(what: string, tokens: number[]): void {
    const bad = tokens.findIndex((t) => !Number.isInteger(t) || t < 0 || t >= this.vocabSize);
    if (bad >= 0) throw new InMemoryBackendUserError(`${what}: token ${tokens[bad]} at ${bad} is outside the vocabulary of ${this.vocabSize}`);
  }
}

function copyState(s: TrainingState): TrainingState {
  return { vocabSize: s.vocabSize, w: Float64Array.from(s.w), m: Float64Array.from(s.m), v: Float64Array.from(s.v), step: s.step };
}

export class InMemoryTrainingClient implements TrainingClient {
  private grad: Float64Array;

  constructor(
    private readonly backend: InMemoryPolicyBackend,
    readonly modelId: string,
    private state: TrainingState,
  ) {
    this.grad = new Float64Array(state.w.length);
  }

  /** a copy of W (row prev, column next), for tests */
  weights(): Float64Array {
    return Float64Array.from(this.state.w);
  }

  /** a copy of the gradient accumulated since the last optimStep, for tests */
  gradient(): Float64Array {
    return Float64Array.from(this.grad);
  }

  /** sets one entry of W (finite-difference checks) */
  setWeight(index: number, value: number): void {
    this.state.w[index] = value;
  }

  /** forgets the accumulated gradient */
  zeroGradient(): void {
    this.grad.fill(0);
  }

  async forwardBackward(datums: Datum[], lossFn: LossFn): Promise<ForwardBackwardResult> {
    await this.backend.enter('forwardBackward');
    return this.pass(datums, lossFn, true);
  }

  /** forwardBackward without accumulating the gradient */
  async forward(datums: Datum[], lossFn: LossFn): Promise<ForwardBackwardResult> {
    await this.backend.enter('forward');
    return this.pass(datums, lossFn, false);
  }

  private pass(datums: Datum[], lossFn: LossFn, accumulate: boolean): ForwardBackwardResult {
    if (lossFn !== 'importance_sampling') throw new InMemoryBackendUserError(`loss '${String(lossFn)}' is not supported`);
    const v = this.state.vocabSize;
    const w = this.state.w;
    let loss = 0;
    const logprobs: number[][] = [];
    datums.forEach((d, i) => {
      const n = d.inputTokens.length;
      if (d.targetTokens.length !== n || d.samplingLogprobs.length !== n || d.advantages.length !== n) {
        throw new InMemoryBackendUserError(`datum ${i}: inputTokens, targetTokens, samplingLogprobs and advantages differ in length`);
      }
      this.backend.checkTokens(`datum ${i} inputTokens`, d.inputTokens);
      this.backend.checkTokens(`datum ${i} targetTokens`, d.targetTokens);
      const lps: number[] = [];
      for (let t = 0; t < n; t++) {
        const prev = d.inputTokens[t]!;
        const y = d.targetTokens[t]!;
        const row = logSoftmaxRow(w, prev, v, 1);
        const logp = row[y]!;
        lps.push(logp);
        const a = d.advantages[t]!;
        if (a === 0) continue;
        // L = -exp(logp - s) A; dL/dW[prev][j] = -A exp(logp - s) (1[j = y] - softmax_j)
        const ratio = Math.exp(logp - d.samplingLogprobs[t]!);
        loss -= ratio * a;
        if (!accumulate) continue;
        for (let j = 0; j < v; j++) {
          const p = Math.exp(row[j]!);
          this.grad[prev * v + j] = this.grad[prev * v + j]! - a * ratio * ((j === y ? 1 : 0) - p);
        }
      }
      logprobs.push(lps);
    });
    return { loss, logprobs };
  }

  async optimStep(params: AdamParams): Promise<{ step: number }> {
    await this.backend.enter('optimStep');
    const s = this.state;
    s.step++;
    const { learningRate: lr, beta1: b1, beta2: b2, eps } = params;
    const wd = params.weightDecay ?? 0;
    const c1 = 1 - b1 ** s.step;
    const c2 = 1 - b2 ** s.step;
    for (let i = 0; i < s.w.length; i++) {
      const g = this.grad[i]!;
      // AdamW: m = b1 m + (1-b1) g; v = b2 v + (1-b2) g^2; w -= lr (m/c1 / (sqrt(v/c2) + eps) + wd w)
      s.m[i] = b1 * s.m[i]! + (1 - b1) * g;
      s.v[i] = b2 * s.v[i]! + (1 - b2) * g * g;
      s.w[i] = s.w[i]! - lr * (s.m[i]! / c1 / (Math.sqrt(s.v[i]! / c2) + eps) + wd * s.w[i]!);
    }
    this.grad.fill(0);
    return { step: s.step };
  }

  async saveWeightsForSampler(name: string): Promise<string> {
    await this.backend.enter('saveWeightsForSampler');
    const path = `memory://${this.modelId}/sampler_weights/${name}`;
    this.backend.storeSamplerWeights(path, this.state);
    return path;
  }

  async saveState(name: string): Promise<string> {
    await this.backend.enter('saveState');
    const path = `memory://${this.modelId}/weights/${name}`;
    this.backend.storeState(path, this.state);
    return path;
  }

  async loadState(path: string): Promise<void> {
    await this.backend.enter('loadState');
    const state = this.backend.loadStoredState(path);
    if (state.vocabSize !== this.state.vocabSize) throw new InMemoryBackendUserError(`state at '${path}' has another vocabulary size`);
    this.state = state;
    this.grad.fill(0);
  }

  async loadWeights(path: string): Promise<void> {
    await this.backend.enter('loadWeights');
    const state = this.backend.loadStoredState(path);
    if (state.vocabSize !== this.state.vocabSize) throw new InMemoryBackendUserError(`state at '${path}' has another vocabulary size`);
    const n = state.w.length;
    this.state = { vocabSize: state.vocabSize, w: state.w, m: new Float64Array(n), v: new Float64Array(n), step: 0 };
    this.grad.fill(0);
  }
}

class InMemorySamplingClient implements SamplingClient {
  constructor(
    private readonly backend: InMemoryPolicyBackend,
    readonly modelPath: string,
    private readonly weights: Weights,
  ) {}

  async sample(promptTokens: number[], numSamples: number, params: SampleParams): Promise<SampledSequence[]> {
    await this.backend.enter('sample');
    if (promptTokens.length === 0) throw new InMemoryBackendUserError('sample: the prompt is empty');
    this.backend.checkTokens('sample prompt', promptTokens);
    const v = this.weights.vocabSize;
    const rand = mulberry32(params.seed ?? Math.floor(Math.random() * 2 ** 32));
    const stops = new Set(params.stopTokens ?? []);
    const out: SampledSequence[] = [];
    for (let s = 0; s < numSamples; s++) {
      const tokens: number[] = [];
      const logprobs: number[] = [];
      let prev = promptTokens[promptTokens.length - 1]!;
      let stopReason: SampledSequence['stopReason'] = 'length';
      for (let k = 0; k < params.maxTokens; k++) {
        // temperature 0 is greedy (logprob reported at temperature 1); otherwise sample softmax(W[prev] / T)
        const greedy = params.temperature === 0;
        const row = logSoftmaxRow(this.weights.w, prev, v, greedy ? 1 : params.temperature);
        let next = 0;
        if (greedy) {
          for (let j = 1; j < v; j++) if (row[j]! > row[next]!) next = j;
        } else {
          const u = rand();
          let acc = 0;
          next = v - 1;
          for (let j = 0; j < v; j++) {
            acc += Math.exp(row[j]!);
            if (u < acc) {
              next = j;
              break;
            }
          }
        }
        tokens.push(next);
        logprobs.push(row[next]!);
        prev = next;
        if (stops.has(next)) {
          stopReason = 'stop';
          break;
        }
      }
      out.push({ tokens, logprobs, stopReason });
    }
    return out;
  }

  async computeLogprobs(tokens: number[]): Promise<(number | null)[]> {
    await this.backend.enter('computeLogprobs');
    this.backend.checkTokens('computeLogprobs', tokens);
    const v = this.weights.vocabSize;
    return tokens.map((t, i) => (i === 0 ? null : logSoftmaxRow(this.weights.w, tokens[i - 1]!, v, 1)[t]!));
  }
}
