// The in-memory test backend is itself checked: its gradient against central finite differences, a zero
// update when every advantage is 0, AdamW's first step, seeded sampling, consistent logprobs.
import type { Datum } from '@rx/backend';
import { InMemoryPolicyBackend } from './in-memory-policy-backend';

const ADAM = { learningRate: 0.1, beta1: 0.9, beta2: 0.95, eps: 1e-8 };

function batch(): Datum[] {
  return [
    { inputTokens: [1, 2, 3, 4], targetTokens: [2, 3, 4, 5], samplingLogprobs: [0, -3.1, -2.7, -3.3], advantages: [0, 0.7, 0.7, 0.7] },
    { inputTokens: [1, 2, 6, 2], targetTokens: [2, 6, 2, 3], samplingLogprobs: [0, -2.9, -3.6, -2.2], advantages: [0, -1.2, -1.2, -1.2] },
  ];
}

describe('InMemoryPolicyBackend', () => {
  it('has the gradient of -sum exp(logp - s) A that central differences give', async () => {
    const backend = new InMemoryPolicyBackend({ vocabSize: 8 });
    const tc = await backend.createLoraTrainingClient({ baseModel: 'rx-test/bigram', rank: 1, seed: 5 });
    await tc.forwardBackward(batch(), 'importance_sampling');
    const grad = tc.gradient();
    const h = 1e-5;
    // rows 2 and 3 are used (rows 0 and 7 are not: their gradient is exactly 0)
    for (const index of [2 * 8 + 3, 2 * 8 + 6, 3 * 8 + 4, 3 * 8 + 0, 6 * 8 + 2, 0 * 8 + 1, 7 * 8 + 7]) {
      const w0 = tc.weights()[index]!;
      const lossAt = async (w: number): Promise<number> => {
        tc.setWeight(index, w);
        const { loss } = await tc.forwardBackward(batch(), 'importance_sampling');
        return loss;
      };
      const numeric = ((await lossAt(w0 + h)) - (await lossAt(w0 - h))) / (2 * h);
      tc.setWeight(index, w0);
      expect(Math.abs(grad[index]! - numeric)).toBeLessThan(1e-8 + 1e-6 * Math.abs(numeric));
    }
    expect(grad[0 * 8 + 1]).toBe(0);
  });

  it('makes no update when every advantage is 0, and the next AdamW step moves each weight by the bias-corrected amount', async () => {
    const backend = new InMemoryPolicyBackend({ vocabSize: 8 });
    const tc = await backend.createLoraTrainingClient({ baseModel: 'rx-test/bigram', rank: 1, seed: 5 });
    const before = tc.weights();
    await tc.forwardBackward(batch().map((d) => ({ ...d, advantages: d.advantages.map(() => 0) })), 'importance_sampling');
    await expect(tc.optimStep(ADAM)).resolves.toEqual({ step: 1 });
    expect(tc.weights()).toEqual(before);
    await tc.forwardBackward(batch(), 'importance_sampling');
    const grad = tc.gradient();
    await tc.optimStep(ADAM);
    const after = tc.weights();
    // step 2 with m, v from a zero step 1: m/c1 = g (1-b1)/(1-b1^2), sqrt(v/c2) = |g| sqrt((1-b2)/(1-b2^2))
    const ratio = (1 - 0.9) / (1 - 0.81) / Math.sqrt((1 - 0.95) / (1 - 0.95 ** 2));
    grad.forEach((g, i) => {
      const expected = g === 0 ? 0 : -ADAM.learningRate * Math.sign(g) * ratio;
      expect(after[i]! - before[i]!).toBeCloseTo(expected, 6);
    });
  });

  it('samples the same tokens for the same seed, with logprobs that computeLogprobs reproduces', async () => {
    const backend = new InMemoryPolicyBackend({ vocabSize: 16 });
    const tc = await backend.createLoraTrainingClient({ baseModel: 'rx-test/bigram', rank: 1, seed: 9 });
    const sc = await backend.createSamplingClient(await tc.saveWeightsForSampler('w'));
    const params = { maxTokens: 12, temperature: 1, stopTokens: [0], seed: 42 };
    const a = await sc.sample([3, 4], 8, params);
    expect(await sc.sample([3, 4], 8, params)).toEqual(a);
    expect(await sc.sample([3, 4], 8, { ...params, seed: 43 })).not.toEqual(a);
    for (const s of a) {
      const lps = await sc.computeLogprobs([3, 4, ...s.tokens]);
      expect(lps.slice(2)).toEqual(s.logprobs);
      expect(s.stopReason === 'stop').toBe(s.tokens.includes(0));
    }
    const greedy = await sc.sample([3], 2, { maxTokens: 4, temperature: 0 });
    expect(greedy[0]).toEqual(greedy[1]);
  });

  it('restores weights and optimizer state from saveState, and refuses unknown paths', async () => {
    const backend = new InMemoryPolicyBackend({ vocabSize: 8 });
    const tc = await backend.createLoraTrainingClient({ baseModel: 'rx-test/bigram', rank: 1, seed: 1 });
    const state = await tc.saveState('init');
    const init = tc.weights();
    await tc.forwardBackward(batch(), 'importance_sampling');
    await tc.optimStep(ADAM);
    expect(tc.weights()).not.toEqual(init);
    await tc.loadState(state);
    expect(tc.weights()).toEqual(init);
    await expect(tc.optimStep(ADAM)).resolves.toEqual({ step: 1 });
    await expect(tc.loadState('memory://nope')).rejects.toMatchObject({ category: 'user', message: "no training state at 'memory://nope'" });
    await expect(backend.createSamplingClient('memory://nope')).rejects.toThrow("no sampler weights at 'memory://nope'");
  });
});
