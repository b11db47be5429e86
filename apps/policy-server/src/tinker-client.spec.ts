// The Tinker client (TinkerBackend) against the policy server over real HTTP on 127.0.0.1: the full RL flow
// (compared number for number with the same backend driven in-process), retries, refusals, timeouts,
// connection loss, idempotent resubmission, long-polls, chunking, failures and limits.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import zlib from 'node:zlib';
import { TinkerApiError, TinkerBackend, TinkerConnectionError, TinkerRequestFailedError, type Datum, type PolicyBackend, type TinkerBackendOptions, type TinkerRetryEvent } from '@rx/backend';
import { InMemoryPolicyBackend, type InMemoryPolicyBackendOptions } from '@rx/backend/testing';
import { float32Wire, startFaultProxy, unusedPort, type FaultProxy } from '@rx/backend/testing';
import { policyServerConfig, type PolicyServerConfig } from './config';
import { startPolicyServer, type PolicyServer } from './policy-server';

const API_KEY = 'tml-test-key-0123456789';
const BASE = 'rx-test/bigram';
const ADAM = { learningRate: 0.05, beta1: 0.9, beta2: 0.95, eps: 1e-8 };
const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.reverse()) await c();
  cleanups.length = 0;
});


async function serve(
  config: Partial<PolicyServerConfig> = {},
  backendOptions: InMemoryPolicyBackendOptions = {},
): Promise<{ backend: InMemoryPolicyBackend; server: PolicyServer }> {
  const backend = new InMemoryPolicyBackend(backendOptions);
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'rx-policy-'));
  const server = await startPolicyServer(policyServerConfig({ port: 0, dataDir, longPollMs: 2000, ...config }), backend, { logger: false });
  cleanups.push(async () => {
    await server.close();
    await backend.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });
  return { backend, server };
}

async function proxy(target: string): Promise<FaultProxy> {
  const p = await startFaultProxy(target);
  cleanups.push(() => p.close());
  return p;
}

function client(baseUrl: string, options: Partial<TinkerBackendOptions> = {}): { tinker: TinkerBackend; retries: TinkerRetryEvent[] } {
  const retries: TinkerRetryEvent[] = [];
  const tinker = new TinkerBackend({
    baseUrl,
    apiKey: API_KEY,
    retries: 3,
    retryBaseDelayMs: 5,
    retryMaxDelayMs: 20,
    timeoutMs: 5000,
    // the HTTP layer alone: no application-level retries above it (tinker-client-faults.spec.ts covers those)
    timing: { stuckTimeoutMs: 0 },
    onRetry: (e) => retries.push(e),
    ...options,
  });
  cleanups.push(() => tinker.close());
  return { tinker, retries };
}

/** Datums from sampled completions: prompt positions carry A = 0, completion positions the completion's A. */
function datumsFor(prompt: number[], completions: { tokens: number[]; logprobs: number[] }[], advantages: number[]): Datum[] {
  return completions.map((c, i) => {
    const all = [...prompt, ...c.tokens];
    const promptTargets = prompt.length - 1;
    return {
      inputTokens: all.slice(0, -1),
      targetTokens: all.slice(1),
      samplingLogprobs: [...new Array<number>(promptTargets).fill(0), ...c.logprobs],
      advantages: [...new Array<number>(promptTargets).fill(0), ...c.tokens.map(() => advantages[i]!)],
    };
  });
}

async function expectRejection<T extends Error>(promise: Promise<unknown>, type: new (...args: never[]) => T): Promise<T> {
  const err = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(type);
  expect((err as Error).message).not.toContain(API_KEY);
  return err as T;
}

/** One RL round trip through a PolicyBackend; returns everything observable, for comparison across transports. */
async function rlFlow(backend: PolicyBackend): Promise<Record<string, unknown>> {
  const prompt = [1, 2, 3, 4];
  const tc = await backend.createLoraTrainingClient({ baseModel: BASE, rank: 4, seed: 7 });
  const initState = await tc.saveState('init');
  const sc0 = await backend.createSamplingClient(await tc.saveWeightsForSampler('step-0'));
  const samples = await sc0.sample(prompt, 4, { maxTokens: 6, temperature: 1, stopTokens: [0], seed: 11 });
  const again = await sc0.sample(prompt, 4, { maxTokens: 6, temperature: 1, stopTokens: [0], seed: 11 });
  const scored = await sc0.computeLogprobs([...prompt, ...samples[0]!.tokens]);
  const datums = datumsFor(prompt, samples, [1, -0.5, 0.25, -0.75]);
  const fb = await tc.forwardBackward(datums, 'importance_sampling');
  const step = await tc.optimStep(ADAM);
  const sc1 = await backend.createSamplingClient(await tc.saveWeightsForSampler('step-1'));
  const after = await sc1.computeLogprobs([...prompt, ...samples[0]!.tokens]);
  await tc.loadState(initState);
  const sc2 = await backend.createSamplingClient(await tc.saveWeightsForSampler('reloaded'));
  const reloaded = await sc2.computeLogprobs([...prompt, ...samples[0]!.tokens]);
  const greedy = await sc1.sample(prompt, 2, { maxTokens: 5, temperature: 0 });
  return { samples, again, scored, datums, fb, step, after, reloaded, greedy, modelId: tc.modelId, initState };
}

describe('TinkerBackend against the policy server', () => {
  it('runs the full flow and gives exactly what the same backend gives in-process', async () => {
    const { server, backend } = await serve();
    const { tinker, retries } = client(server.url);
    const remote = await rlFlow(tinker);
    const local = await rlFlow(float32Wire(new InMemoryPolicyBackend()));
    expect(retries).toEqual([]);

    expect(remote.modelId).toMatch(/:train:0$/);
    expect(remote.initState).toBe(`tinker://${String(remote.modelId)}/weights/init`);
    for (const key of ['samples', 'again', 'scored', 'fb', 'step', 'after', 'reloaded', 'greedy']) {
      expect({ [key]: remote[key] }).toEqual({ [key]: local[key] });
    }
    const samples = remote.samples as { tokens: number[]; logprobs: number[]; stopReason: string }[];
    expect(samples).toHaveLength(4);
    expect(remote.again).toEqual(samples);
    for (const s of samples) {
      expect(s.logprobs).toHaveLength(s.tokens.length);
      expect(s.tokens.length).toBeLessThanOrEqual(6);
      expect(s.stopReason).toBe(s.tokens[s.tokens.length - 1] === 0 ? 'stop' : 'length');
    }
    // prompt logprobs: first null, completion positions equal the sampler's logprobs
    const scored = remote.scored as (number | null)[];
    expect(scored[0]).toBeNull();
    expect(scored.slice(4)).toEqual(samples[0]!.logprobs);
    // training logprobs equal sampling logprobs before the update, so every ratio is 1 and loss = -sum A, up to
    // the float32 rounding of the sampling logprobs on the wire: |exp(lp - fround(lp)) - 1| <= 2^-24 |lp| (+ slack)
    const fb = remote.fb as { loss: number; logprobs: number[][] };
    const datums = remote.datums as Datum[];
    fb.logprobs.forEach((lp, i) => {
      datums[i]!.advantages.forEach((a, t) => {
        if (a !== 0) expect(lp[t]).toBeCloseTo(datums[i]!.samplingLogprobs[t]!, 12);
      });
    });
    const sumA = datums.reduce((s, d) => s + d.advantages.reduce((x, y) => x + y, 0), 0);
    const roundingBound = datums.reduce((s, d) => s + d.advantages.reduce((x, a, t) => x + Math.abs(a) * 2 ** -24 * Math.abs(d.samplingLogprobs[t]!) * 1.01, 0), 0);
    expect(Math.abs(fb.loss + sumA)).toBeLessThanOrEqual(roundingBound + 1e-12);
    expect(remote.step).toEqual({ step: 1 });
    expect(remote.after).not.toEqual(remote.scored);
    expect(remote.reloaded).toEqual(remote.scored);
    expect(backend.calls.forwardBackward).toBe(1);
    expect(await tinker.ping()).toBe(true);
  });

  it('samples and scores the prompt in one asample (prompt_logprobs), as the two calls would', async () => {
    const { server } = await serve();
    const { tinker } = client(server.url);
    const tc = await tinker.createLoraTrainingClient({ baseModel: BASE, rank: 4, seed: 0 });
    const sc = await tinker.createSamplingClient(await tc.saveWeightsForSampler('both'));
    const prompt = [1, 2, 3, 4];
    const params = { maxTokens: 6, temperature: 1, stopTokens: [0], seed: 11 };
    const asamples = async () => {
      const text = await (await fetch(`${server.url}/metrics`)).text();
      const line = text.split('\n').find((l) => l.startsWith('rx_policy_server_requests_total{endpoint="asample",status="200"'));
      return line ? Number(line.split(' ').pop()) : 0;
    };
    const before = await asamples();
    const both = await sc.sampleWithPromptLogprobs!(prompt, 3, params);
    expect((await asamples()) - before).toBe(1);
    expect(both.sequences).toEqual(await sc.sample(prompt, 3, params));
    expect(both.promptLogprobs).toEqual(await sc.computeLogprobs(prompt));
    expect(both.promptLogprobs[0]).toBeNull();
  });

  it('opens one sampling session per sampling client (seq ids per session) and refuses an unknown path at creation', async () => {
    const { server } = await serve();
    const { tinker } = client(server.url);
    const tc = await tinker.createLoraTrainingClient({ baseModel: BASE, rank: 4, seed: 0 });
    const path = await tc.saveWeightsForSampler('by-path');
    const requests = async (endpoint: string) => {
      const text = await (await fetch(`${server.url}/metrics`)).text();
      return text.split('\n').filter((l) => l.startsWith(`rx_policy_server_requests_total{endpoint="${endpoint}"`)).reduce((n, l) => n + Number(l.split(' ').pop()), 0);
    };
    const sc = await tinker.createSamplingClient(path);
    const first = await sc.sample([1, 2, 3], 2, { maxTokens: 4, temperature: 1, seed: 3 });
    expect(await (await tinker.createSamplingClient(path)).sample([1, 2, 3], 2, { maxTokens: 4, temperature: 1, seed: 3 })).toEqual(first);
    expect(await requests('create_sampling_session')).toBe(2);
    expect(sc.samplingSessionId).toMatch(/:sample:0$/);
    await expect(tinker.createSamplingClient(path.replace('by-path', 'never-saved'))).rejects.toThrow(/400.*no sampler weights at 'tinker:\/\/.*never-saved'/);
  });

  it('retries a 500 and then succeeds, running the work once', async () => {
    const { server, backend } = await serve();
    const p = await proxy(server.url);
    const { tinker, retries } = client(p.url);
    const tc = await tinker.createLoraTrainingClient({ baseModel: BASE, rank: 2, seed: 1 });
    p.inject({ path: '/api/v1/forward_backward', times: 1, action: { kind: 'status', status: 500, body: '{"error":"boom"}' } });
    const datum: Datum = { inputTokens: [1, 2], targetTokens: [2, 3], samplingLogprobs: [0, -1], advantages: [0, 1] };
    const res = await tc.forwardBackward([datum], 'importance_sampling');
    expect(res.logprobs[0]).toHaveLength(2);
    expect(retries).toEqual([expect.objectContaining({ endpoint: 'POST /api/v1/forward_backward', attempt: 1, reason: 'HTTP 500' })]);
    expect(p.hits.get('/api/v1/forward_backward')).toBe(2);
    expect(backend.calls.forwardBackward).toBe(1);
  });

  it('does not retry a 400, quotes the server, and the next call still runs (the refused seq_id is used on both sides)', async () => {
    const { server, backend } = await serve({ maxTokensPerRequest: 10 });
    const p = await proxy(server.url);
    const { tinker, retries } = client(p.url);
    const tc = await tinker.createLoraTrainingClient({ baseModel: BASE, rank: 2, seed: 1 });
    const big: Datum = { inputTokens: new Array(12).fill(1), targetTokens: new Array(12).fill(2), samplingLogprobs: new Array(12).fill(0), advantages: new Array(12).fill(0) };
    const err = await expectRejection(tc.forwardBackward([big], 'importance_sampling'), TinkerApiError);
    expect(err.status).toBe(400);
    expect(err.attempts).toBe(1);
    expect(err.message).toContain('POST /api/v1/forward_backward');
    expect(err.message).toContain('12 tokens in one request; this server takes at most 10');
    expect(retries).toEqual([]);
    expect(p.hits.get('/api/v1/forward_backward')).toBe(1);
    const small: Datum = { inputTokens: [1, 2], targetTokens: [2, 3], samplingLogprobs: [0, 0], advantages: [0, 0] };
    await expect(tc.forwardBackward([small], 'importance_sampling')).resolves.toEqual(expect.objectContaining({ loss: 0 }));
    expect(backend.calls.forwardBackward).toBe(1);
  });

  it('times out a request that gets no answer, retries it, then says which endpoint and how long', async () => {
    const { server } = await serve();
    const p = await proxy(server.url);
    const { tinker, retries } = client(p.url, { timeoutMs: 150, retries: 1 });
    p.inject({ path: '/api/v1/create_model', times: 5, action: { kind: 'hang' } });
    const started = Date.now();
    const err = await expectRejection(tinker.createLoraTrainingClient({ baseModel: BASE, rank: 2, seed: 1 }), TinkerConnectionError);
    expect(Date.now() - started).toBeGreaterThanOrEqual(300);
    expect(err.timedOut).toBe(true);
    expect(err.attempts).toBe(2);
    expect(err.message).toMatch(/^Tinker POST \/api\/v1\/create_model: no answer within 150 ms at http:\/\/127\.0\.0\.1:\d+ after 2 attempts$/);
    expect(retries).toEqual([expect.objectContaining({ endpoint: 'POST /api/v1/create_model', reason: 'no answer within 150 ms' })]);
    expect(p.hits.get('/api/v1/create_model')).toBe(2);
  });

  it('retries a refused connection with back-off, then gives a clear error', async () => {
    const port = await unusedPort();
    const { tinker, retries } = client(`http://127.0.0.1:${port}`, { retries: 2, retryBaseDelayMs: 20, retryMaxDelayMs: 40 });
    const started = Date.now();
    const err = await expectRejection(tinker.createLoraTrainingClient({ baseModel: BASE, rank: 2, seed: 1 }), TinkerConnectionError);
    expect(err.message).toBe(`Tinker POST /api/v1/client/config: connection refused (ECONNREFUSED) at http://127.0.0.1:${port} after 3 attempts`);
    expect(err.timedOut).toBe(false);
    expect(retries.map((r) => r.attempt)).toEqual([1, 2]);
    // back-off with at most 25 % jitter below: >= 15 ms then >= 30 ms
    expect(retries[0]!.delayMs).toBeGreaterThanOrEqual(15);
    expect(retries[1]!.delayMs).toBeGreaterThanOrEqual(30);
    expect(Date.now() - started).toBeGreaterThanOrEqual(45);
    expect(await tinker.ping()).toBe(false);
  });

  it('resends a call whose answer was lost with the same idempotency key, and the server runs it once', async () => {
    const { server, backend } = await serve();
    const p = await proxy(server.url);
    const { tinker, retries } = client(p.url);
    const tc = await tinker.createLoraTrainingClient({ baseModel: BASE, rank: 2, seed: 1 });
    p.inject({ path: '/api/v1/forward_backward', times: 1, action: { kind: 'reset-after' } });
    p.inject({ path: '/api/v1/optim_step', times: 1, action: { kind: 'reset-before' } });
    const datum: Datum = { inputTokens: [3, 4], targetTokens: [4, 5], samplingLogprobs: [0, -2], advantages: [0, 1] };
    await tc.forwardBackward([datum], 'importance_sampling');
    await expect(tc.optimStep(ADAM)).resolves.toEqual({ step: 1 });
    expect(retries.map((r) => r.endpoint)).toEqual(['POST /api/v1/forward_backward', 'POST /api/v1/optim_step']);
    expect(p.hits.get('/api/v1/forward_backward')).toBe(2);
    expect(backend.calls.forwardBackward).toBe(1);
    expect(backend.calls.optimStep).toBe(1);
  });

  it('keeps polling through try_again answers while slow work runs', async () => {
    const { server } = await serve({ longPollMs: 40 }, { opDelayMs: 250 });
    const p = await proxy(server.url);
    const { tinker } = client(p.url);
    const tc = await tinker.createLoraTrainingClient({ baseModel: BASE, rank: 2, seed: 1 });
    const polls = p.hits.get('/api/v1/retrieve_future') ?? 0;
    expect(polls).toBeGreaterThanOrEqual(3);
    await expect(tc.optimStep(ADAM)).resolves.toEqual({ step: 1 });
  });

  it('splits a batch into the chunks client/config announces and merges the results', async () => {
    const { server, backend } = await serve({ fwdbwdMaxChunkLen: 2 });
    const p = await proxy(server.url);
    const { tinker } = client(p.url);
    const reference = new InMemoryPolicyBackend();
    const datums: Datum[] = [0, 1, 2, 3, 4].map((i) => ({
      inputTokens: [i, i + 1, i + 2],
      targetTokens: [i + 1, i + 2, i + 3],
      samplingLogprobs: [0, -1.5, -2],
      advantages: [0, i - 2, i - 2],
    }));
    const [remoteTc, localTc] = await Promise.all([tinker, reference].map((b) => b.createLoraTrainingClient({ baseModel: BASE, rank: 2, seed: 3 })));
    const [remote, local] = await Promise.all([remoteTc!, localTc!].map((tc) => tc.forwardBackward(datums, 'importance_sampling')));
    expect(p.hits.get('/api/v1/forward_backward')).toBe(3);
    expect(backend.calls.forwardBackward).toBe(3);
    expect(remote!.logprobs).toEqual(local!.logprobs.map((lp) => lp.map(Math.fround)));
    expect(remote!.loss).toBeCloseTo(local!.loss, 12);
    // gradients of the chunks accumulate until optim_step: the update equals the one-batch update
    await Promise.all([remoteTc!, localTc!].map((tc) => tc.optimStep(ADAM)));
    const probe = [0, 1, 2, 3, 4, 5, 6, 7];
    const [rs, ls] = await Promise.all(
      [remoteTc!, localTc!].map(async (tc, i) => (await [tinker, reference][i]!.createSamplingClient(await tc.saveWeightsForSampler('s'))).computeLogprobs(probe)),
    );
    // the remote logprobs crossed the float32 wire
    rs!.forEach((v, i) => (v === null ? expect(ls![i]).toBeNull() : expect(v).toBeCloseTo(Math.fround(ls![i]!), 12)));
  });

  it("reports a failed request with the server's category and message, without retrying", async () => {
    const { server, backend } = await serve();
    const { tinker, retries } = client(server.url);
    // a request the model cannot serve is refused up front (400), not accepted and then failed
    const refused = await expectRejection(tinker.createLoraTrainingClient({ baseModel: 'no/such-model', rank: 2, seed: 1 }), TinkerApiError);
    expect([refused.status, refused.message]).toEqual([400, expect.stringContaining("unknown base model 'no/such-model'")]);
    const tc = await tinker.createLoraTrainingClient({ baseModel: BASE, rank: 2, seed: 1 });
    const userErr = await expectRejection(tc.loadState(`tinker://${tc.modelId}/weights/never-saved`), TinkerRequestFailedError);
    expect(userErr.category).toBe('user');
    expect(userErr.message).toContain(`no training state at 'tinker://${tc.modelId}/weights/never-saved'`);
    backend.failNext('optimStep', new Error('optimizer exploded'));
    const serverErr = await expectRejection(tc.optimStep(ADAM), TinkerRequestFailedError);
    expect(serverErr.category).toBe('server');
    expect(serverErr.message).toMatch(/^Tinker POST \/api\/v1\/optim_step \(request req_[0-9a-f-]{36}\) failed \[server\]: optimizer exploded$/);
    expect(retries).toEqual([]);
    await expect(tc.optimStep(ADAM)).resolves.toEqual({ step: 1 });
  });

  it('answers a body over the size limit with 413 and a clear message', async () => {
    const { server } = await serve({ maxBodyBytes: 2000 });
    const { tinker, retries } = client(server.url);
    const tc = await tinker.createLoraTrainingClient({ baseModel: BASE, rank: 2, seed: 1 });
    const n = 200;
    const datum: Datum = { inputTokens: new Array(n).fill(1), targetTokens: new Array(n).fill(2), samplingLogprobs: new Array(n).fill(-1.2345), advantages: new Array(n).fill(0) };
    const err = await expectRejection(tc.forwardBackward([datum], 'importance_sampling'), TinkerApiError);
    expect(err.status).toBe(413);
    expect(err.message).toMatch(/exceeds the limit of 2000 bytes \(RX_POLICY_MAX_BODY_BYTES\)/);
    expect(retries).toEqual([]);
  });

  it('answers a gzip bomb (a small body that inflates past the limit) with 413 naming the limit', async () => {
    const { server } = await serve({ maxBodyBytes: 2000, apiKey: 'bomb-key-123' });
    const body = zlib.gzipSync(Buffer.from(`{"pad":"${' '.repeat(1_000_000)}"}`));
    expect(body.length).toBeLessThan(2000);
    const res = await fetch(`${server.url}/api/v1/create_model`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'content-encoding': 'gzip', 'x-api-key': 'bomb-key-123' },
      body,
    });
    expect(res.status).toBe(413);
    const answer = (await res.json()) as { error: string };
    expect(answer.error).toBe('request body exceeds the limit of 2000 bytes once decompressed (RX_POLICY_MAX_BODY_BYTES)');
  });

  it('refuses a wrong API key with 401 and never shows the key', async () => {
    const { server } = await serve({ apiKey: 'server-secret-1' });
    const { tinker, retries } = client(server.url);
    const err = await expectRejection(tinker.createLoraTrainingClient({ baseModel: BASE, rank: 2, seed: 1 }), TinkerApiError);
    expect(err.status).toBe(401);
    expect(err.message).toContain('missing or wrong X-API-Key');
    expect(`${err.message} ${err.body}`).not.toContain('server-secret-1');
    expect(retries).toEqual([]);
    const { tinker: good } = client(server.url, { apiKey: 'server-secret-1' });
    await expect(good.createLoraTrainingClient({ baseModel: BASE, rank: 2, seed: 1 })).resolves.toBeDefined();
  });

  it('adds RX_POLICY_LATENCY_MS to each API request', async () => {
    const { server } = await serve({ latencyMs: 150 });
    const { tinker } = client(server.url);
    const started = Date.now();
    expect(await tinker.ping()).toBe(true);
    expect(Date.now() - started).toBeGreaterThanOrEqual(145);
  });

  it('sends session heartbeats until closed', async () => {
    const { server } = await serve();
    const p = await proxy(server.url);
    const { tinker } = client(p.url, { heartbeatIntervalMs: 30 });
    await tinker.createLoraTrainingClient({ baseModel: BASE, rank: 2, seed: 1 });
    await new Promise((r) => setTimeout(r, 300));
    const beats = p.hits.get('/api/v1/session_heartbeat') ?? 0;
    expect(beats).toBeGreaterThanOrEqual(2);
    await tinker.close();
    await new Promise((r) => setTimeout(r, 100));
    // at most one beat that was already on its way when close() ran, then none
    const afterClose = p.hits.get('/api/v1/session_heartbeat') ?? 0;
    expect(afterClose - beats).toBeLessThanOrEqual(1);
    await new Promise((r) => setTimeout(r, 150));
    expect(p.hits.get('/api/v1/session_heartbeat')).toBe(afterClose);
    await expect(tinker.createLoraTrainingClient({ baseModel: BASE, rank: 2, seed: 1 })).rejects.toThrow('the backend is closed');
  });

  it('checks datums before sending anything', async () => {
    const { server } = await serve();
    const p = await proxy(server.url);
    const { tinker } = client(p.url);
    const tc = await tinker.createLoraTrainingClient({ baseModel: BASE, rank: 2, seed: 1 });
    const bad: Datum = { inputTokens: [1, 2, 3], targetTokens: [2, 3], samplingLogprobs: [0, 0, 0], advantages: [0, 0, 0] };
    await expect(tc.forwardBackward([bad], 'importance_sampling')).rejects.toThrow('datum 0: targetTokens has 2 entries, inputTokens has 3');
    expect(p.hits.get('/api/v1/forward_backward')).toBeUndefined();
  });
});
