// TEST DOUBLE. A deterministic in-memory PolicyBackend. Its "weights" are a hash chain: each optim_step hashes
// the gradient digest of the datums passed to forward_backward into the weights digest, and sampling is a
// pure function of (weights digest, prompt, seed). So two runs fed the same batches sample the same rollouts,
// and a step applied twice (or skipped) changes every later sample: exactly-once is observable from outside.
// Prompts (rendered by the char renderer unless told otherwise) are answered like "What is a + b?": right, wrong, unboxed or truncated, by a seeded draw.
// Each prompt has an ease in [0, 1) (a hash of its tokens alone): easier prompts are answered right more often and
// have higher prompt-token logprobs, as with a real model, so the kernel baseline's second feature predicts reward.
import { createHash } from 'node:crypto';
import { mulberry32 } from '@rx/stats';
import {
  charRenderer,
  type Renderer,
  type AdamParams,
  type Datum,
  type ForwardBackwardResult,
  type LoraConfig,
  type LossFn,
  type PolicyBackend,
  type SampledSequence,
  type SampleParams,
  type SamplingClient,
  type TrainingClient,
} from '@rx/backend';

const WEIGHTS_PREFIX = 'memory://hash-chain/';

function sha(...parts: Array<string | number>): string {
  return createHash('sha256').update(parts.join('\u0001')).digest('hex');
}

/** a [0, 1) stream seeded by a hex digest (mulberry32 over its first 32 bits) */
function stream(hex: string): () => number {
  return mulberry32(parseInt(hex.slice(0, 8), 16));
}

export interface HashChainCalls {
  createTrainingClient: number;
  sample: number;
  computeLogprobs: number;
  forwardBackward: number;
  optimStep: number;
  saveWeightsForSampler: number;
  /** most sample + computeLogprobs calls in flight at once */
  maxInFlight: number;
  /** every forward_backward's datums, in call order */
  datums: Datum[][];
  adamParams: AdamParams[];
}

export interface HashChainOptions {
  renderer?: Renderer;
  /** delay of each sample/computeLogprobs call (to observe concurrency) */
  latencyMs?: number;
  /** P(correct boxed answer) of a sample: the same for every prompt when set; default 0.45 on average over prompts */
  pCorrect?: number;
}

/** how much P(correct) varies with a prompt's ease (when pCorrect is not set): 0.45 + (ease - 0.5), in [-0.05, 0.95) */
const EASE_SPREAD = 1.0;

/** a prompt's ease in [0, 1): a function of its tokens only, the same under every weights */
function easeOf(promptTokens: readonly number[]): number {
  return stream(sha('ease', promptTokens.join(',')))();
}

export class HashChainPolicyBackend implements PolicyBackend {
  readonly kind = 'embedded' as const;
  readonly calls: HashChainCalls = {
    createTrainingClient: 0,
    sample: 0,
    computeLogprobs: 0,
    forwardBackward: 0,
    optimStep: 0,
    saveWeightsForSampler: 0,
    maxInFlight: 0,
    datums: [],
    adamParams: [],
  };
  /** set to make the next forwardBackward / optimStep throw (failure injection) */
  failNext: { forwardBackward?: Error; optimStep?: Error } = {};
  private inFlight = 0;
  private closed = false;
  private readonly renderer: Renderer;

  constructor(private readonly opts: HashChainOptions = {}) {
    this.renderer = opts.renderer ?? charRenderer;
  }

  async createLoraTrainingClient(config: LoraConfig): Promise<TrainingClient> {
    this.live();
    this.calls.createTrainingClient++;
    return new HashChainTrainingClient(this, sha('init', config.baseModel, config.rank, config.seed));
  }

  async createSamplingClient(modelPath: string): Promise<SamplingClient> {
    this.live();
    if (!modelPath.startsWith(WEIGHTS_PREFIX)) throw new Error(`not a hash-chain weights path: ${modelPath}`);
    return new HashChainSamplingClient(this, modelPath.slice(WEIGHTS_PREFIX.length));
  }

  async ping(): Promise<boolean> {
    return !this.closed;
  }

  async close(): Promise<void> {
    this.closed = true;
  }

  /** @internal */
  live(): void {
    if (this.closed) throw new Error('backend closed');
  }

  /** @internal */
  async request<T>(fn: () => T): Promise<T> {
    this.live();
    this.inFlight++;
    this.calls.maxInFlight = Math.max(this.calls.maxInFlight, this.inFlight);
    try {
      await new Promise((r) => setTimeout(r, this.opts.latencyMs ?? 0));
      return fn();
    } finally {
      this.inFlight--;
    }
  }

  /** @internal P(correct) for a prompt of this ease */
  pCorrect(ease: number): number {
    return this.opts.pCorrect ?? 0.45 + EASE_SPREAD * (ease - 0.5);
  }

  /** @internal */
  get textRenderer(): Renderer {
    return this.renderer;
  }

  static weightsPath(digest: string): string {
    return `${WEIGHTS_PREFIX}${digest}`;
  }
}

/** one AdamW-trained bias per (input token, target token) pair, with its moments */
interface BigramBias {
  value: number;
  m: number;
  v: number;
  grad: number;
}

class HashChainTrainingClient implements TrainingClient {
  readonly modelId: string;
  private pending: string | null = null;
  private steps = 0;
  /**
   * The client's own update, visible in its training logprobs: logp_t = logp_sampled_t + bias(input_t, target_t),
   * the biases trained by AdamW on the importance-sampling gradient since the client last loaded or saved a state
   * (a saved state is its digest alone, so every step starts at ratio 1 as before). The correctness preflight's
   * update check steps such a client once and sees the surrogate fall as its gradient says.
   */
  private bias = new Map<string, BigramBias>();
  private biasSteps = 0;

  constructor(private readonly backend: HashChainPolicyBackend, private digest: string) {
    this.modelId = `hash-chain-${digest.slice(0, 12)}`;
  }

  async forwardBackward(datums: Datum[], lossFn: LossFn): Promise<ForwardBackwardResult> {
    this.backend.live();
    this.backend.calls.forwardBackward++;
    const injected = this.backend.failNext.forwardBackward;
    if (injected) {
      this.backend.failNext.forwardBackward = undefined;
      throw injected;
    }
    if (lossFn !== 'importance_sampling') throw new Error(`unsupported loss ${lossFn}`);
    let loss = 0;
    const logprobs: number[][] = [];
    for (const d of datums) {
      const n = d.inputTokens.length;
      if (d.targetTokens.length !== n || d.samplingLogprobs.length !== n || d.advantages.length !== n) throw new Error('datum fields differ in length');
      // logp_t = logp_sampled_t + b_t, ratio exp(b_t); L = -sum_t exp(b_t) A_t, dL/db_t = -exp(b_t) A_t (1 and -A_t while no bias is trained)
      logprobs.push(
        d.advantages.map((a, t) => {
          const b = this.biasOf(d.inputTokens[t], d.targetTokens[t]);
          const ratio = Math.exp(b.value);
          loss -= ratio * a;
          b.grad -= ratio * a;
          return d.samplingLogprobs[t] + b.value;
        }),
      );
    }
    this.backend.calls.datums.push(structuredClone(datums));
    this.pending = sha(this.pending ?? 'grad', JSON.stringify(datums));
    return { loss, logprobs };
  }

  private biasOf(input: number, target: number): BigramBias {
    const key = `${input},${target}`;
    let b = this.bias.get(key);
    if (!b) this.bias.set(key, (b = { value: 0, m: 0, v: 0, grad: 0 }));
    return b;
  }

  // AdamW on each bias: m = b1 m + (1 - b1) g; v = b2 v + (1 - b2) g^2; b -= lr (m / (1 - b1^t)) / (sqrt(v / (1 - b2^t)) + eps)
  private stepBias(p: AdamParams): void {
    const t = ++this.biasSteps;
    for (const b of this.bias.values()) {
      b.m = p.beta1 * b.m + (1 - p.beta1) * b.grad;
      b.v = p.beta2 * b.v + (1 - p.beta2) * b.grad * b.grad;
      b.value -= (p.learningRate * (b.m / (1 - p.beta1 ** t))) / (Math.sqrt(b.v / (1 - p.beta2 ** t)) + p.eps);
      b.grad = 0;
    }
  }

  private resetBias(): void {
    this.bias = new Map();
    this.biasSteps = 0;
  }

  async optimStep(params: AdamParams): Promise<{ step: number }> {
    this.backend.live();
    this.backend.calls.optimStep++;
    const injected = this.backend.failNext.optimStep;
    if (injected) {
      this.backend.failNext.optimStep = undefined;
      throw injected;
    }
    if (this.pending === null) throw new Error('optim_step without a forward_backward');
    this.backend.calls.adamParams.push({ ...params });
    this.digest = sha(this.digest, this.pending, params.learningRate, params.beta1, params.beta2, params.eps);
    this.pending = null;
    this.stepBias(params);
    return { step: ++this.steps };
  }

  async saveWeightsForSampler(_name: string): Promise<string> {
    this.backend.live();
    this.backend.calls.saveWeightsForSampler++;
    return HashChainPolicyBackend.weightsPath(this.digest);
  }

  async saveState(_name: string): Promise<string> {
    this.backend.live();
    this.resetBias();
    return `memory://hash-chain-state/${this.digest}/${this.steps}`;
  }

  async loadState(path: string): Promise<void> {
    const m = /^memory:\/\/hash-chain-state\/([0-9a-f]{64})\/(\d+)$/.exec(path);
    if (!m) throw new Error(`not a hash-chain state path: ${path}`);
    this.digest = m[1];
    this.steps = Number(m[2]);
    this.pending = null;
    this.resetBias();
  }
}

class HashChainSamplingClient implements SamplingClient {
  constructor(private readonly backend: HashChainPolicyBackend, private readonly digest: string) {}

  get modelPath(): string {
    return HashChainPolicyBackend.weightsPath(this.digest);
  }

  sample(promptTokens: number[], numSamples: number, params: SampleParams): Promise<SampledSequence[]> {
    return this.backend.request(() => {
      this.backend.calls.sample++;
      const renderer = this.backend.textRenderer;
      const stop = params.stopTokens?.[0];
      const m = /(\d+) \+ (\d+)/.exec(renderer.decode(promptTokens));
      const sum = m ? Number(m[1]) + Number(m[2]) : 0;
      const ease = easeOf(promptTokens);
      return Array.from({ length: numSamples }, (_, j) => {
        const rand = stream(sha(this.digest, promptTokens.join(','), params.seed ?? 0, j, params.temperature));
        const u = rand();
        const p = this.backend.pCorrect(ease);
        let text: string;
        let ends = true;
        if (u < p) text = `${m?.[1]} plus ${m?.[2]} is \\boxed{${sum}}`;
        else if (u < p + 0.3) text = `it is \\boxed{${sum + 1 + Math.floor(rand() * 5)}}`;
        else if (u < p + 0.4) text = `roughly ${sum}`;
        else {
          text = `let me think about ${m?.[1]} and ${m?.[2]} `.repeat(40);
          ends = false;
        }
        let tokens = renderer.encode(text);
        let stopReason: 'stop' | 'length' = 'length';
        if (ends && stop !== undefined) tokens.push(stop);
        if (tokens.length > params.maxTokens) tokens = tokens.slice(0, params.maxTokens);
        else if (ends && stop !== undefined) stopReason = 'stop';
        const logprobs = tokens.map(() => Math.fround(Math.log(0.05 + 0.95 * rand())));
        return { tokens, logprobs, stopReason };
      });
    });
  }

  computeLogprobs(tokens: number[]): Promise<(number | null)[]> {
    return this.backend.request(() => {
      this.backend.calls.computeLogprobs++;
      const rand = stream(sha(this.digest, 'prompt', tokens.join(',')));
      // mean about -0.05 - 0.25 * (3.5 - 3 * ease): easy prompts are likelier
      const scale = 3.5 - 3 * easeOf(tokens);
      return tokens.map((_, i) => (i === 0 ? null : Math.fround(-0.05 - scale * rand() * rand())));
    });
  }
}
