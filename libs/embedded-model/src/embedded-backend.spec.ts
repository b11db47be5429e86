import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { CHAR_EOS, type Datum } from '@rx/backend';
import { EMBEDDED_BASE_MODEL } from './base-checkpoint';
import { EmbeddedBackend, EMBEDDED_BASE_PATH, type EmbeddedTrainingClient } from './embedded-backend';
import { Prng } from './prng';
import { tf } from './tf-runtime';
import { forwardLogits, type ModelWeights } from './transformer';
import { randomLike, TINY_CONFIG, writeTinyBase, type TinyBase } from './tiny-base.fixture';

const ADAM = { learningRate: 1e-2, beta1: 0.9, beta2: 0.95, eps: 1e-8 };
const REPO_ROOT = path.resolve(__dirname, '..', '..', '..');

/** prompt + completion datums with prompt positions masked (A = 0), as the trainer builds them */
function makeDatums(seed: number, lengths: [number, number][], advantages: number[]): Datum[] {
  const rng = new Prng(seed, 1);
  return lengths.map(([prompt, completion], i) => {
    const tokens = Array.from({ length: prompt + completion }, () => 4 + Math.floor(rng.uniform() * (TINY_CONFIG.vocabSize - 4)));
    const n = tokens.length - 1;
    return {
      inputTokens: tokens.slice(0, -1),
      targetTokens: tokens.slice(1),
      samplingLogprobs: Array.from({ length: n }, (_, t) => (t >= prompt - 1 ? -3 + rng.uniform() : 0)),
      advantages: Array.from({ length: n }, (_, t) => (t >= prompt - 1 ? advantages[i] : 0)),
    };
  });
}

describe('EmbeddedBackend (tiny model)', () => {
  let tiny: TinyBase;
  let backend: EmbeddedBackend;

  beforeAll(() => {
    tiny = writeTinyBase();
    backend = new EmbeddedBackend({ dataDir: tiny.dataDir, baseCheckpoint: tiny.baseDir });
  });
  afterAll(async () => {
    await backend.close();
    tiny.cleanup();
  });

  async function client(seed = 3, rank = 4): Promise<EmbeddedTrainingClient> {
    return backend.createLoraTrainingClient({ baseModel: EMBEDDED_BASE_MODEL, rank, seed });
  }

  it('announces the limits of its base model, and refuses another base model as a user error', async () => {
    expect(await backend.modelLimits(EMBEDDED_BASE_MODEL)).toEqual({ vocabSize: TINY_CONFIG.vocabSize, contextLength: TINY_CONFIG.context, maxLoraRank: 256 });
    await expect(backend.modelLimits('Qwen/Qwen3-8B')).rejects.toMatchObject({ category: 'user', message: expect.stringContaining("not 'Qwen/Qwen3-8B'") });
    await expect(backend.createLoraTrainingClient({ baseModel: 'Qwen/Qwen3-8B', rank: 4, seed: 1 })).rejects.toMatchObject({ category: 'user' });
  });

  it('matches central finite differences of the importance-sampling loss on LoRA parameters', async () => {
    const c = await client();
    c.setLoraParams(randomLike(c.loraParams(), 5, 0.1));
    const datums = makeDatums(1, [[6, 9], [10, 5], [4, 12]], [0.8, -0.5, 1.3]);
    const fb = await c.forwardBackward(datums, 'importance_sampling');
    expect(Number.isFinite(fb.loss)).toBe(true);
    const analytic = c.accumulatedGrads();
    const probe = await client();
    const base = c.loraParams();
    // a few entries of A and B in attention and MLP projections of both layers
    const picks: [string, number][] = [
      ['l0.wq.lora_a', 5],
      ['l0.wv.lora_b', 17],
      ['l1.wk.lora_a', 30],
      ['l1.wo.lora_b', 3],
      ['l0.fc1.lora_a', 40],
      ['l1.fc2.lora_b', 9],
    ];
    const h = 3e-3;
    for (const [name, j] of picks) {
      const i = base.findIndex((p) => p.name === name);
      const lossAt = async (delta: number) => {
        const ps = base.map((p) => ({ ...p, data: new Float64Array(p.data) }));
        ps[i].data[j] += delta;
        probe.setLoraParams(ps);
        return (await probe.forwardBackward(datums, 'importance_sampling')).loss;
      };
      const fd = ((await lossAt(h)) - (await lossAt(-h))) / (2 * h);
      const g = analytic[i].data[j];
      // float32 forward pass, h = 3e-3 on float64 parameters: |fd - g| <= 5e-4 + 5e-3 |g|
      expect(Math.abs(fd - g)).toBeLessThanOrEqual(5e-4 + 5e-3 * Math.abs(g));
      expect(Math.abs(g)).toBeGreaterThan(1e-3);
    }
  });

  it('gives a zero gradient and leaves the adapters unchanged when every advantage is 0', async () => {
    const c = await client();
    c.setLoraParams(randomLike(c.loraParams(), 6, 0.3));
    const before = c.loraParams();
    const fb = await c.forwardBackward(makeDatums(2, [[5, 8], [7, 6]], [0, 0]), 'importance_sampling');
    expect(fb.loss).toBe(0);
    for (const g of c.accumulatedGrads()) expect(g.data.every((x) => x === 0)).toBe(true);
    await c.optimStep(ADAM);
    c.loraParams().forEach((p, i) => expect(Array.from(p.data)).toEqual(Array.from(before[i].data)));
  });

  it('starts from the base model: B = 0, so the initial adapter changes no logprob', async () => {
    const c = await client(9);
    const path0 = await c.saveWeightsForSampler('run/arm/step-0000');
    const tokens = makeDatums(3, [[8, 10]], [1])[0].inputTokens;
    const viaAdapter = await (await backend.createSamplingClient(path0)).computeLogprobs(tokens);
    const viaBase = await (await backend.createSamplingClient(EMBEDDED_BASE_PATH)).computeLogprobs(tokens);
    expect(viaAdapter).toEqual(viaBase);
  });

  it('samples reproducibly from a seed, and differently from another seed', async () => {
    const sc = await backend.createSamplingClient(EMBEDDED_BASE_PATH);
    const prompt = [1, 10, 11, 12, 13];
    const params = { maxTokens: 12, temperature: 1, seed: 42 };
    const a = await sc.sample(prompt, 4, params);
    const b = await sc.sample(prompt, 4, params);
    const c = await sc.sample(prompt, 4, { ...params, seed: 43 });
    expect(b).toEqual(a);
    expect(c.map((s) => s.tokens)).not.toEqual(a.map((s) => s.tokens));
    expect(new Set(a.map((s) => s.tokens.join(','))).size).toBeGreaterThan(1);
  });

  it('gives bit-identical samples in another process', async () => {
    const script = path.join(tiny.root, 'sample-child.ts');
    fs.writeFileSync(
      script,
      [
        `import { EmbeddedBackend, EMBEDDED_BASE_PATH } from ${JSON.stringify(path.join(__dirname, 'embedded-backend'))};`,
        `(async () => {`,
        `  const b = new EmbeddedBackend({ dataDir: ${JSON.stringify(tiny.dataDir)}, baseCheckpoint: ${JSON.stringify(tiny.baseDir)} });`,
        `  const s = await (await b.createSamplingClient(EMBEDDED_BASE_PATH)).sample([1, 10, 11, 12, 13], 3, { maxTokens: 10, temperature: 1, seed: 77 });`,
        `  process.stdout.write(JSON.stringify(s));`,
        `})();`,
      ].join('\n'),
    );
    const out = execFileSync(process.execPath, ['-r', path.join(REPO_ROOT, 'tools', 'register.js'), script], { cwd: REPO_ROOT, encoding: 'utf8' });
    const here = await (await backend.createSamplingClient(EMBEDDED_BASE_PATH)).sample([1, 10, 11, 12, 13], 3, { maxTokens: 10, temperature: 1, seed: 77 });
    expect(JSON.parse(out)).toEqual(JSON.parse(JSON.stringify(here)));
  }, 30000);

  it('returns KV-cache logprobs that match a full forward pass within 1e-4, for left-padded batches too', async () => {
    const c = await client(4);
    c.setLoraParams(randomLike(c.loraParams(), 8, 0.2));
    const sc = await backend.createSamplingClient(await c.saveWeightsForSampler('kv/check'));
    const prompts = [[1, 20, 21], [1, 5, 6, 7, 8, 9, 10, 11], [1, 30, 31, 32, 33]];
    const samples = await sc.sampleBatch(prompts, { maxTokens: 15, temperature: 1, seed: 5 });
    for (let i = 0; i < prompts.length; i++) {
      const full = await sc.computeLogprobs([...prompts[i], ...samples[i].tokens]);
      const tail = full.slice(prompts[i].length) as number[];
      expect(tail).toHaveLength(samples[i].logprobs.length);
      tail.forEach((lp, t) => expect(Math.abs(lp - samples[i].logprobs[t])).toBeLessThan(1e-4));
    }
    // the training forward pass of the same adapters agrees with the merged sampler weights
    const seq = [...prompts[1], ...samples[1].tokens];
    const fb = await c.forwardBackward(
      [{ inputTokens: seq.slice(0, -1), targetTokens: seq.slice(1), samplingLogprobs: seq.slice(1).map(() => 0), advantages: seq.slice(1).map(() => 0) }],
      'importance_sampling',
    );
    const samplerLp = (await sc.computeLogprobs(seq)).slice(1) as number[];
    fb.logprobs[0].forEach((lp, t) => expect(Math.abs(lp - samplerLp[t])).toBeLessThan(1e-4));
  });

  it('decodes greedily and deterministically, whatever the seed and the batch', async () => {
    const sc = await backend.createSamplingClient(EMBEDDED_BASE_PATH);
    const prompt = [1, 14, 15, 16];
    const a = await sc.sample(prompt, 2, { maxTokens: 10, temperature: 0, seed: 1 });
    const b = await sc.sample(prompt, 1, { maxTokens: 10, temperature: 0, seed: 2 });
    const batch = await sc.sampleBatch([[1, 40, 41, 42, 43, 44], prompt], { maxTokens: 10, temperature: 0 });
    expect(a[0].tokens).toEqual(a[1].tokens);
    expect(b[0].tokens).toEqual(a[0].tokens);
    expect(batch[1].tokens).toEqual(a[0].tokens);
    // each greedy token is the argmax of the full forward pass
    const seq = [...prompt, ...a[0].tokens];
    const w = await backend.samplerWeights(EMBEDDED_BASE_PATH);
    const logits = tf.tidy(() => tf.argMax(forwardAll(w, seq), -1).dataSync());
    a[0].tokens.forEach((tok, t) => expect(logits[prompt.length - 1 + t]).toBe(tok));
  });

  it('stops on a stop token and caps new tokens at context minus prompt length', async () => {
    const sc = await backend.createSamplingClient(EMBEDDED_BASE_PATH);
    const long = Array.from({ length: TINY_CONFIG.context - 3 }, (_, i) => 4 + (i % 50));
    const [capped] = await sc.sample(long, 1, { maxTokens: 50, temperature: 1, seed: 3 });
    expect(capped.tokens).toHaveLength(3);
    expect(capped.stopReason).toBe('length');
    const all = Array.from({ length: 62 }, (_, i) => i);
    const stopped = await sc.sample([1, 10, 11], 8, { maxTokens: 30, temperature: 1, seed: 9, stopTokens: all });
    for (const s of stopped) {
      expect(s.tokens).toHaveLength(1);
      expect(s.stopReason).toBe('stop');
    }
    const eos = await sc.sample([1, 10, 11], 8, { maxTokens: 30, temperature: 1, seed: 9, stopTokens: [CHAR_EOS] });
    for (const s of eos) expect(s.stopReason === 'stop' ? s.tokens[s.tokens.length - 1] === CHAR_EOS : s.tokens.length === 30).toBe(true);
  });

  it('round-trips the training state: weights, Adam moments and step', async () => {
    const a = await client(21);
    const datums = makeDatums(4, [[5, 9], [6, 7]], [1, -1]);
    await a.forwardBackward(datums, 'importance_sampling');
    await a.optimStep(ADAM);
    const statePath = await a.saveState('run/grpo/step-0001');
    expect(statePath).toBe('embedded://states/run/grpo/step-0001');
    expect(fs.existsSync(path.join(tiny.dataDir, 'states', 'run', 'grpo', 'step-0001', 'state.bin'))).toBe(true);
    const b = await client(99);
    await b.loadState(statePath);
    expect(b.step).toBe(1);
    b.loraParams().forEach((p, i) => expect(Array.from(p.data)).toEqual(Array.from(a.loraParams()[i].data)));
    // one more identical step on both gives identical adapters (the moments were restored too)
    for (const c of [a, b]) {
      await c.forwardBackward(datums, 'importance_sampling');
      await c.optimStep(ADAM);
    }
    b.loraParams().forEach((p, i) => expect(Array.from(p.data)).toEqual(Array.from(a.loraParams()[i].data)));
    expect(b.step).toBe(2);
  });

  it('saves sampler weights under weights/<name> and names them embedded://<name>', async () => {
    const c = await client(5);
    const p = await c.saveWeightsForSampler('exp1/gs1_kernel/step-0040');
    expect(p).toBe('embedded://exp1/gs1_kernel/step-0040');
    expect(fs.existsSync(path.join(tiny.dataDir, 'weights', 'exp1', 'gs1_kernel', 'step-0040', 'adapter.json'))).toBe(true);
  });

  it('does not leak tensors across training and sampling calls', async () => {
    const c = await client(6);
    const sc = await backend.createSamplingClient(EMBEDDED_BASE_PATH);
    const datums = makeDatums(5, [[5, 9]], [1]);
    const round = async () => {
      await c.forwardBackward(datums, 'importance_sampling');
      await c.optimStep(ADAM);
      await sc.sample([1, 10, 11], 4, { maxTokens: 8, temperature: 1, seed: 1 });
      await sc.computeLogprobs([1, 10, 11, 12]);
    };
    await round();
    const before = tf.memory().numTensors;
    for (let i = 0; i < 3; i++) await round();
    expect(tf.memory().numTensors).toBe(before);
  });

  it('rejects user mistakes with clear errors', async () => {
    await expect(backend.createLoraTrainingClient({ baseModel: 'Qwen/Qwen3.5-2B', rank: 4, seed: 0 })).rejects.toThrow("serves base model 'rx/char-lm'");
    await expect(backend.createLoraTrainingClient({ baseModel: EMBEDDED_BASE_MODEL, rank: 0, seed: 0 })).rejects.toThrow('LoRA rank');
    await expect(backend.createSamplingClient('tinker://abc')).rejects.toThrow('is not an embedded:// path');
    await expect(backend.createSamplingClient('embedded://nope/step-1')).rejects.toThrow('no saved tensors');
    const c = await client();
    await expect(c.saveWeightsForSampler('../escape')).rejects.toThrow('invalid model name');
    await expect(c.loadState('embedded://run/arm/step-1')).rejects.toThrow('does not name a saved state');
    const bad = makeDatums(6, [[4, 5]], [1]);
    bad[0].advantages.pop();
    await expect(c.forwardBackward(bad, 'importance_sampling')).rejects.toThrow('must have the same length');
    const far = makeDatums(6, [[4, 5]], [1]);
    far[0].inputTokens[2] = 500;
    await expect(c.forwardBackward(far, 'importance_sampling')).rejects.toThrow('outside the vocabulary');
    const sc = await backend.createSamplingClient(EMBEDDED_BASE_PATH);
    await expect(sc.sample(Array.from({ length: TINY_CONFIG.context + 1 }, () => 5), 1, { maxTokens: 1, temperature: 1 })).rejects.toThrow('exceed the model context');
    await expect(c.optimStep({ ...ADAM, beta2: 1 })).rejects.toThrow('beta2');
  });
});


function forwardAll(w: ModelWeights, tokens: number[]): tf.Tensor2D {
  return forwardLogits(w, tf.tensor2d([tokens], [1, tokens.length], 'int32'));
}
