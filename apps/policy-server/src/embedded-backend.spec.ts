// The real EmbeddedBackend (@rx/embedded-model, tfjs) behind the policy server, on a tiny random base
// checkpoint: TinkerBackend over HTTP gives the same samples, logprobs (as float32, the wire's), loss and update as in-process.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { CHAR_VOCAB_SIZE, TinkerBackend, type Datum, type PolicyBackend } from '@rx/backend';
import { float32Wire } from '@rx/backend/testing';
import { EMBEDDED_BASE_MODEL, EmbeddedBackend, initBaseParams, writeBaseCheckpoint } from '@rx/embedded-model';
import { policyServerConfig } from './config';
import { startPolicyServer } from './policy-server';

const ADAM = { learningRate: 0.01, beta1: 0.9, beta2: 0.95, eps: 1e-8 };

async function flow(backend: PolicyBackend): Promise<unknown[]> {
  const prompt = [1, 10, 11, 12, 13];
  const tc = await backend.createLoraTrainingClient({ baseModel: EMBEDDED_BASE_MODEL, rank: 4, seed: 3 });
  const sc = await backend.createSamplingClient(await tc.saveWeightsForSampler('step-0'));
  const samples = await sc.sample(prompt, 3, { maxTokens: 6, temperature: 1, stopTokens: [2], seed: 5 });
  const datums: Datum[] = samples.map((s, i) => {
    const all = [...prompt, ...s.tokens];
    const p = prompt.length - 1;
    return {
      inputTokens: all.slice(0, -1),
      targetTokens: all.slice(1),
      samplingLogprobs: [...new Array<number>(p).fill(0), ...s.logprobs],
      advantages: [...new Array<number>(p).fill(0), ...s.tokens.map(() => [1, -1, 0.5][i]!)],
    };
  });
  const fb = await tc.forwardBackward(datums, 'importance_sampling');
  const step = await tc.optimStep(ADAM);
  const after = await (await backend.createSamplingClient(await tc.saveWeightsForSampler('step-1'))).computeLogprobs([...prompt, ...samples[0]!.tokens]);
  return [samples, fb, step, after];
}

describe('policy server over the EmbeddedBackend', () => {
  jest.setTimeout(60_000);

  it('gives over HTTP what the embedded model gives in-process', async () => {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), 'rx-policy-embedded-'));
    const baseDir = path.join(root, 'base');
    const cfg = { vocabSize: CHAR_VOCAB_SIZE, width: 16, layers: 2, heads: 2, context: 40, mlpWidth: 32 };
    writeBaseCheckpoint(baseDir, cfg, initBaseParams(cfg, 7), { fixture: true });
    const local = new EmbeddedBackend({ dataDir: path.join(root, 'local'), baseCheckpoint: baseDir });
    const served = new EmbeddedBackend({ dataDir: path.join(root, 'served'), baseCheckpoint: baseDir });
    const server = await startPolicyServer(policyServerConfig({ port: 0, dataDir: path.join(root, 'served') }), served, { logger: false });
    const tinker = new TinkerBackend({ baseUrl: server.url, apiKey: 'local-key-1', retries: 0 });
    try {
      // in-process results as the protobuf wire carries them (logprobs as float32)
      const [remote, inProcess] = [await flow(tinker), await flow(float32Wire(local))];
      expect(remote).toEqual(inProcess);
      const [samples] = remote as [{ tokens: number[]; logprobs: number[] }[]];
      expect(samples).toHaveLength(3);
      expect(samples.every((s) => s.logprobs.length === s.tokens.length && s.tokens.length > 0)).toBe(true);
    } finally {
      await tinker.close();
      await server.close();
      await served.close();
      await local.close();
      fs.rmSync(root, { recursive: true, force: true });
    }
  });
});
