// A PolicyBackend as seen through Tinker's protobuf wire (SDK 0.25 and the service carry logprobs as float32):
// sampled, prompt and training logprobs rounded to float32, losses and everything else unchanged. Tests compare
// a backend driven over HTTP with the same one in-process through it.
import type { PolicyBackend, SampledSequence, SamplingClient } from '@rx/backend';

/** The backend's answers as they arrive over the protobuf wire. */
export function float32Wire(backend: PolicyBackend): PolicyBackend {
  const f = (xs: number[]): number[] => xs.map(Math.fround);
  const fn = (xs: (number | null)[]): (number | null)[] => xs.map((x) => (x === null ? null : Math.fround(x)));
  const seqs = (ss: SampledSequence[]): SampledSequence[] => ss.map((s) => ({ ...s, logprobs: f(s.logprobs) }));
  const sampling = (c: SamplingClient): SamplingClient => ({
    modelPath: c.modelPath,
    sample: async (p, n, params) => seqs(await c.sample(p, n, params)),
    computeLogprobs: async (t) => fn(await c.computeLogprobs(t)),
    sampleWithPromptLogprobs: async (p, n, params) => {
      const r = await c.sampleWithPromptLogprobs!(p, n, params);
      return { sequences: seqs(r.sequences), promptLogprobs: fn(r.promptLogprobs) };
    },
  });
  return {
    kind: backend.kind,
    createLoraTrainingClient: async (config) => {
      const c = await backend.createLoraTrainingClient(config);
      return {
        modelId: c.modelId,
        forwardBackward: async (d, l) => {
          const r = await c.forwardBackward(d, l);
          return { loss: r.loss, logprobs: r.logprobs.map(f) };
        },
        optimStep: (p) => c.optimStep(p),
        saveWeightsForSampler: (n) => c.saveWeightsForSampler(n),
        saveState: (n) => c.saveState(n),
        loadState: (p) => c.loadState(p),
      };
    },
    createSamplingClient: async (p) => sampling(await backend.createSamplingClient(p)),
    ping: () => backend.ping(),
    close: () => backend.close(),
  };
}

