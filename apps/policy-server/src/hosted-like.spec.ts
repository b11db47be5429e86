// The hosted-like mode: its configuration (RX_POLICY_HOSTED_LIKE, inline or @file) and its refusals, over real HTTP.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { importanceSamplingLoss, TinkerBackend, TinkerSessionLostError, type Datum, type TinkerTiming } from '@rx/backend';
import { InMemoryPolicyBackend } from '@rx/backend/testing';
import { parsePolicyServerConfig } from './config';
import { parseHostedLike } from './hosted-like.config';
import { api, futureResult, policyServerHarness, rawRequest } from './testing/policy-server.harness';

const harness = policyServerHarness();
afterEach(() => harness.close());

describe('hosted-like configuration', () => {
  it('is off unless set; inline JSON or @file; defaults for what the object leaves out', () => {
    expect(parsePolicyServerConfig({}).hostedLike).toBeNull();
    expect(parsePolicyServerConfig({ RX_POLICY_HOSTED_LIKE: ' ' }).hostedLike).toBeNull();
    expect(parsePolicyServerConfig({ RX_POLICY_HOSTED_LIKE: '{"refuse_model_seed":true}' }).hostedLike).toEqual({ refuse_model_seed: true, no_archive_route: false, faults: {} });
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rx-hosted-like-'));
    try {
      const file = path.join(dir, 'hosted.json');
      fs.writeFileSync(file, JSON.stringify({ no_archive_route: true }));
      expect(parseHostedLike(`@${file}`)).toEqual({ refuse_model_seed: false, no_archive_route: true, faults: {} });
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('a bad object is one line naming the variable and the field', () => {
    expect(() => parsePolicyServerConfig({ RX_POLICY_HOSTED_LIKE: '{"refuse_model_seed":"yes"}' })).toThrow(
      'policy-server configuration: RX_POLICY_HOSTED_LIKE is not a hosted-like configuration: refuse_model_seed: Expected boolean, received string',
    );
    expect(() => parsePolicyServerConfig({ RX_POLICY_HOSTED_LIKE: '{"refuse_seed":true}' })).toThrow(/RX_POLICY_HOSTED_LIKE .*Unrecognized key\(s\) in object: 'refuse_seed'/);
    expect(() => parsePolicyServerConfig({ RX_POLICY_HOSTED_LIKE: 'refuse' })).toThrow(/RX_POLICY_HOSTED_LIKE is not a hosted-like configuration: its JSON is not JSON/);
    expect(() => parsePolicyServerConfig({ RX_POLICY_HOSTED_LIKE: '@/nonexistent/hosted.json' })).toThrow(/cannot read \/nonexistent\/hosted.json \(ENOENT\)/);
  });
});

describe('hosted-like refusals', () => {
  const lora = (seed?: number) => ({ rank: 2, ...(seed === undefined ? {} : { seed }) });
  async function createModel(server: Awaited<ReturnType<typeof harness.serve>>, seed?: number): Promise<{ status: number; json: Record<string, unknown> }> {
    const session = await api(server, 'create_session', { sdk_version: 'test', tags: [] });
    return api(server, 'create_model', { session_id: session.json.session_id, model_seq_id: 0, base_model: 'rx-test/bigram', lora_config: lora(seed) });
  }

  it('refuse_model_seed: create_model with a seed is a 400 naming lora_config.seed; without one it is served', async () => {
    const server = await harness.serve(new InMemoryPolicyBackend(), { hostedLike: { refuse_model_seed: true, no_archive_route: false, faults: {} } });
    const refused = await createModel(server, 7);
    expect(refused.status).toBe(400);
    expect(refused.json.error).toMatch(/lora_config\.seed is not supported/);
    const served = await createModel(server);
    expect(served.status).toBe(200);
    expect(await futureResult(server, served.json.request_id)).toMatchObject({ model_id: expect.any(String) });
  });

  it('off: the same create_model with a seed is served', async () => {
    const server = await harness.serve(new InMemoryPolicyBackend());
    const served = await createModel(server, 7);
    expect(served.status).toBe(200);
  });
});

describe('hosted-like faults, through the Tinker client rx runs with', () => {
  const FAULTS = {};
  const DATUMS: Datum[] = [
    { inputTokens: [1, 2, 3, 4], targetTokens: [2, 3, 4, 5], samplingLogprobs: [0, 0, -1.2, -0.7], advantages: [0, 0, 0.5, 0.5] },
    { inputTokens: [3, 1, 2], targetTokens: [1, 2, 6], samplingLogprobs: [0, -2.1, -0.4], advantages: [0, -0.25, -0.25] },
  ];
  const warnings: string[] = [];
  const client = (url: string, timing: Partial<TinkerTiming> = {}) => {
    const t = new TinkerBackend({ baseUrl: url, apiKey: 'tml-test', retries: 1, retryBaseDelayMs: 1, retryMaxDelayMs: 5, timing: { appRetryBaseDelayMs: 5, appRetryMaxDelayMs: 20, pollBackoffBaseMs: 5, pollBackoffMaxMs: 20, waitReportEveryMs: 100, ...timing }, logger: { warn: (m) => warnings.push(m) } });
    harnessCleanups.push(() => t.close());
    return t;
  };
  const harnessCleanups: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const c of harnessCleanups.splice(0)) await c();
    warnings.length = 0;
  });

  it('logprob_noise: the same request twice differs by at most the amplitude, and the loss is that of the moved logprobs', async () => {
    const exact = await (await new InMemoryPolicyBackend().createLoraTrainingClient({ baseModel: 'rx-test/bigram', rank: 2, seed: 1 })).forwardBackward(DATUMS, 'importance_sampling');
    const server = await harness.serve(new InMemoryPolicyBackend(), { hostedLike: { refuse_model_seed: false, no_archive_route: false, faults: { ...FAULTS, logprob_noise: { amplitude: 1e-3, seed: 0 } } } });
    const tc = await client(server.url).createLoraTrainingClient({ baseModel: 'rx-test/bigram', rank: 2, seed: 1 });
    const one = await tc.forwardBackward(DATUMS, 'importance_sampling');
    const two = await tc.forwardBackward(DATUMS, 'importance_sampling');
    const diffs = (a: number[][], b: number[][]) => a.flatMap((row, i) => row.map((x, t) => Math.abs(x - b[i][t])));
    expect(Math.max(...diffs(one.logprobs, two.logprobs))).toBeGreaterThan(1e-4);
    expect(Math.max(...diffs(one.logprobs, exact.logprobs))).toBeLessThanOrEqual(1e-3 + 1e-6);
    expect(one.loss).toBeCloseTo(importanceSamplingLoss(DATUMS, one.logprobs), 6);
  });

  it('a 429 storm and a 503 burst are waited out; the storm is longer than the client would wait at the old 5-minute scale', async () => {
    const server = await harness.serve(new InMemoryPolicyBackend(), {
      hostedLike: { refuse_model_seed: false, no_archive_route: false, faults: { ...FAULTS, status_bursts: [{ status: 429, after_requests: 4, duration_ms: 1500 }, { status: 503, after_requests: 4, count: 5 }] } },
    });
    const started = Date.now();
    const tc = await client(server.url, { stuckTimeoutMs: 10_000 }).createLoraTrainingClient({ baseModel: 'rx-test/bigram', rank: 2, seed: 1 });
    await expect(tc.forwardBackward(DATUMS, 'importance_sampling')).resolves.toMatchObject({ logprobs: expect.any(Array) });
    expect(Date.now() - started).toBeGreaterThanOrEqual(1400);
    expect(warnings.some((w) => /^Tinker: HTTP (429|503) on .* retrying/.test(w))).toBe(true);
  });

  it('lose_sessions_at_request: the next call naming the session is a lost session; a new client works in a new one', async () => {
    const server = await harness.serve(new InMemoryPolicyBackend(), { hostedLike: { refuse_model_seed: false, no_archive_route: false, faults: { ...FAULTS, lose_sessions_at_request: 5 } } });
    const tinker = client(server.url);
    const tc = await tinker.createLoraTrainingClient({ baseModel: 'rx-test/bigram', rank: 2, seed: 1 });
    let lost: unknown = null;
    for (let i = 0; i < 5 && lost === null; i++) lost = await tc.forwardBackward(DATUMS, 'importance_sampling').then(() => null, (e: unknown) => e);
    expect(lost).toBeInstanceOf(TinkerSessionLostError);
    const again = await tinker.createLoraTrainingClient({ baseModel: 'rx-test/bigram', rank: 2, seed: 1 });
    await expect(again.forwardBackward(DATUMS, 'importance_sampling')).resolves.toMatchObject({ logprobs: expect.any(Array) });
  });

  it('expire_every_nth_sample_future: every sample future expires at its first poll; the client resubmits and gets the result', async () => {
    const server = await harness.serve(new InMemoryPolicyBackend(), { hostedLike: { refuse_model_seed: false, no_archive_route: false, faults: { ...FAULTS, expire_every_nth_sample_future: 2 } } });
    const tinker = client(server.url);
    const tc = await tinker.createLoraTrainingClient({ baseModel: 'rx-test/bigram', rank: 2, seed: 1 });
    const sampler = await tinker.createSamplingClient(await tc.saveWeightsForSampler('s0'));
    for (let i = 0; i < 4; i++) await expect(sampler.sample([1, 2], 2, { maxTokens: 3, temperature: 1, seed: i })).resolves.toHaveLength(2);
    // the server's own count: the 2nd, 4th and 6th sample futures expired, each resubmitted (4 samples, 7 submissions)
    const metrics = (await rawRequest(server, 'GET', '/metrics')).body;
    expect(metrics).toMatch(/rx_policy_server_requests_total\{endpoint="asample",status="200",service="policy-server"\} 7\n/);
    expect(metrics).toMatch(/rx_policy_server_requests_total\{endpoint="retrieve_future",status="410",service="policy-server"\} 3\n/);
  });

  it('unserved_models: get_server_capabilities leaves the model out, create_model refuses it', async () => {
    const server = await harness.serve(new InMemoryPolicyBackend(), { hostedLike: { refuse_model_seed: false, no_archive_route: false, faults: { ...FAULTS, unserved_models: ['rx-test/bigram'] } } });
    const caps = await rawRequest(server, 'GET', '/api/v1/get_server_capabilities');
    expect(caps.json).toEqual({ supported_models: [] });
    const session = await api(server, 'create_session', { sdk_version: 'test', tags: [] });
    const refused = await api(server, 'create_model', { session_id: session.json.session_id, model_seq_id: 0, base_model: 'rx-test/bigram', lora_config: { rank: 2 } });
    expect([refused.status, refused.json.error]).toEqual([400, "create_model: base_model 'rx-test/bigram' is not served here"]);
  });

  it('slow_step_ms: forward_backward and optim_step answer after it', async () => {
    const server = await harness.serve(new InMemoryPolicyBackend(), { hostedLike: { refuse_model_seed: false, no_archive_route: false, faults: { ...FAULTS, slow_step_ms: 400 } } });
    const tc = await client(server.url).createLoraTrainingClient({ baseModel: 'rx-test/bigram', rank: 2, seed: 1 });
    const started = Date.now();
    await tc.forwardBackward(DATUMS, 'importance_sampling');
    expect(Date.now() - started).toBeGreaterThanOrEqual(400);
  });
});
