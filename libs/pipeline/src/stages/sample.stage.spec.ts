import { charRenderer } from '@rx/backend';
import { HashChainPolicyBackend } from '@rx/backend/testing';
import { QUEUE_CATALOG, type SampleRequest } from '@rx/contracts';
import { testStepRequest } from '@rx/pipeline/testing';
import { promptPhi, sampleBatch } from './sample.stage';

async function sampleRequestFor(backend: HashChainPolicyBackend, arm: 'grpo_gs8' | 'gs1_kernel', step = 0): Promise<SampleRequest> {
  const req = testStepRequest('run-s', arm, step);
  const client = await backend.createLoraTrainingClient(req.lora);
  return { runId: req.runId, arm: req.arm, step: req.step, plan: req.plan, samplerPath: await client.saveWeightsForSampler('w'), prompts: req.prompts };
}

describe('promptPhi', () => {
  it('is (ln P, mean of the P-1 scored prompt-token logprobs)', () => {
    const [a, b] = promptPhi([5, 6, 7, 8], [null, -1, -2, -4.5]);
    expect(a).toBe(Math.log(4));
    expect(b).toBeCloseTo(-7.5 / 3, 15);
  });

  it('refuses a one-token prompt and mismatched lengths', () => {
    expect(() => promptPhi([5], [null])).toThrow(/at least 2 tokens/);
    expect(() => promptPhi([5, 6], [null])).toThrow(/2 prompt tokens but 1 logprobs/);
  });
});

describe('sampleBatch', () => {
  it('GS1: 64 prompts x 1, every request in flight up to the concurrency limit, never above', async () => {
    const backend = new HashChainPolicyBackend({ latencyMs: 5 });
    const req = await sampleRequestFor(backend, 'gs1_kernel');
    const batch = await sampleBatch(req, { backend, renderer: charRenderer, concurrency: 16 });
    expect(backend.calls.maxInFlight).toBe(16);
    expect(backend.calls.sample).toBe(64);
    expect(backend.calls.computeLogprobs).toBe(64);
    expect(batch.rollouts).toHaveLength(64);
    expect(QUEUE_CATALOG.rollouts.schema.safeParse(batch).success).toBe(true);
  });

  it('with a limit above the batch, all 2 x 64 requests are in flight together', async () => {
    const backend = new HashChainPolicyBackend({ latencyMs: 20 });
    const req = await sampleRequestFor(backend, 'gs1_kernel');
    await sampleBatch(req, { backend, renderer: charRenderer, concurrency: 1000 });
    expect(backend.calls.maxInFlight).toBe(128);
  });

  it('GRPO: 8 prompts x 8, ids <step>-<prompt * 8 + sample>, phi shared within a prompt and equal to the backend logprobs', async () => {
    const backend = new HashChainPolicyBackend();
    const req = await sampleRequestFor(backend, 'grpo_gs8', 3);
    const batch = await sampleBatch(req, { backend, renderer: charRenderer, concurrency: 4 });
    expect(batch.rollouts.map((r) => r.rolloutId)).toEqual(Array.from({ length: 64 }, (_, i) => `3-${i}`));
    expect(batch.rollouts.slice(8, 16).every((r) => r.promptId === req.prompts[1].promptId)).toBe(true);

    const sampler = await backend.createSamplingClient(req.samplerPath);
    const tokens = charRenderer.buildPrompt(req.prompts[1].question);
    expect(batch.prompts[1].tokens).toEqual(tokens);
    const expected = promptPhi(tokens, await sampler.computeLogprobs(tokens));
    for (const r of batch.rollouts.slice(8, 16)) expect(r.phi).toEqual(expected);

    // each prompt samples with seed + its index; logprobs carried as the backend's float32 values
    const direct = await sampler.sample(tokens, 8, { maxTokens: 64, temperature: 1, stopTokens: charRenderer.stopTokens, seed: req.plan.sampling.seed + 1 });
    expect(batch.rollouts.slice(8, 16).map((r) => r.tokens)).toEqual(direct.map((d) => d.tokens));
    expect(batch.rollouts.slice(8, 16).map((r) => r.logprobs.map(Math.fround))).toEqual(direct.map((d) => d.logprobs));
    expect(batch.prompts[1].answer).toBe(req.prompts[1].answer);
    expect(batch.timings.sample).toBeGreaterThanOrEqual(0);
  });

  it('fails the batch when the backend returns fewer samples than the group size', async () => {
    const backend = new HashChainPolicyBackend();
    const req = await sampleRequestFor(backend, 'grpo_gs8');
    const short = { ...backend, createSamplingClient: async (p: string) => {
      const c = await backend.createSamplingClient(p);
      return { modelPath: c.modelPath, computeLogprobs: (t: number[]) => c.computeLogprobs(t), sample: async (t: number[], n: number, o: Parameters<typeof c.sample>[2]) => (await c.sample(t, n, o)).slice(1) };
    } };
    await expect(sampleBatch(req, { backend: short as unknown as HashChainPolicyBackend, renderer: charRenderer, concurrency: 4 })).rejects.toThrow(/returned 7 samples for prompt \d, asked for 8/);
  });

  it('asks once per prompt where the client samples and scores the prompt together, and gets the same batch', async () => {
    const backend = new HashChainPolicyBackend({ latencyMs: 2 });
    const req = await sampleRequestFor(backend, 'gs1_kernel');
    const twoCalls = await sampleBatch(req, { backend, renderer: charRenderer, concurrency: 16 });
    let combined = 0;
    const oneCall = {
      ...backend,
      createSamplingClient: async (p: string) => {
        const c = await backend.createSamplingClient(p);
        return {
          modelPath: c.modelPath,
          sample: () => Promise.reject(new Error('sample called')),
          computeLogprobs: () => Promise.reject(new Error('computeLogprobs called')),
          sampleWithPromptLogprobs: async (t: number[], n: number, o: Parameters<typeof c.sample>[2]) => {
            combined++;
            return { sequences: await c.sample(t, n, o), promptLogprobs: await c.computeLogprobs(t) };
          },
        };
      },
    };
    const batch = await sampleBatch(req, { backend: oneCall as unknown as HashChainPolicyBackend, renderer: charRenderer, concurrency: 16 });
    expect(combined).toBe(64);
    expect({ ...batch, timings: {} }).toEqual({ ...twoCalls, timings: {} });
  });
});
