// A PolicyBackend decorator that times every call into rx_backend_request_duration_seconds{operation} and
// counts the ones that throw in rx_backend_request_errors_total{operation}.
import type { PolicyBackend, SampleParams, SamplingClient, TrainingClient } from '@rx/backend';
import type { BackendOperation, RxMetrics } from '@rx/metrics';

type Observe = RxMetrics['observeBackend'];

async function timed<T>(observe: Observe, op: BackendOperation, call: () => Promise<T>): Promise<T> {
  const t0 = performance.now();
  try {
    const r = await call();
    observe(op, (performance.now() - t0) / 1000, true);
    return r;
  } catch (err) {
    observe(op, (performance.now() - t0) / 1000, false);
    throw err;
  }
}

export function instrumentBackend(backend: PolicyBackend, metrics: Pick<RxMetrics, 'observeBackend'>): PolicyBackend {
  const observe: Observe = (op, s, ok) => metrics.observeBackend(op, s, ok);
  const training = (c: TrainingClient): TrainingClient => ({
    get modelId() {
      return c.modelId;
    },
    forwardBackward: (datums, lossFn) => timed(observe, 'forward_backward', () => c.forwardBackward(datums, lossFn)),
    optimStep: (params) => timed(observe, 'optim_step', () => c.optimStep(params)),
    saveWeightsForSampler: (name, options) => timed(observe, 'save_weights_for_sampler', () => c.saveWeightsForSampler(name, options)),
    saveState: (name, options) => timed(observe, 'save_state', () => c.saveState(name, options)),
    loadState: (path) => timed(observe, 'load_state', () => c.loadState(path)),
  });
  const sampling = (c: SamplingClient): SamplingClient => ({
    get modelPath() {
      return c.modelPath;
    },
    sample: (tokens, n, params) => timed(observe, 'sample', () => c.sample(tokens, n, params)),
    computeLogprobs: (tokens) => timed(observe, 'compute_logprobs', () => c.computeLogprobs(tokens)),
    ...(c.sampleWithPromptLogprobs ? { sampleWithPromptLogprobs: (tokens: number[], n: number, params: SampleParams) => timed(observe, 'sample_with_prompt_logprobs', () => c.sampleWithPromptLogprobs!(tokens, n, params)) } : {}),
  });
  return {
    get kind() {
      return backend.kind;
    },
    createLoraTrainingClient: async (config) => training(await timed(observe, 'create_training_client', () => backend.createLoraTrainingClient(config))),
    createSamplingClient: async (path) => sampling(await timed(observe, 'create_sampling_client', () => backend.createSamplingClient(path))),
    ping: () => timed(observe, 'ping', () => backend.ping()),
    close: () => backend.close(),
  };
}
