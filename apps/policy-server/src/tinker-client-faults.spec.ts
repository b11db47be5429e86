// The Tinker client through a fault-injecting HTTP proxy (real HTTP on 127.0.0.1) in front of the policy
// server: bursts of 429/5xx/409 longer than the HTTP retries, a 402 billing pause, a JWT gateway whose tokens
// expire during the run, and a session the server forgets. The SDK's timings are scaled down through the
// client's `timing` option (its 5-minute retry budget becomes 3 s), so a burst of a few hundred milliseconds
// stands for minutes. Every run is checked on the server side: exactly one forward_backward and one optim_step
// per training step, and final weights identical to the same steps run in-process.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { TinkerBackend, TinkerSessionLostError, TinkerStuckError, type Datum, type PolicyBackend, type TinkerBackendOptions, type TinkerRetryEvent } from '@rx/backend';
import { InMemoryPolicyBackend } from '@rx/backend/testing';
import { float32Wire, startFaultProxy, type FaultProxy, type FaultProxyOptions } from '@rx/backend/testing';
import { policyServerConfig } from './config';
import { startPolicyServer } from './policy-server';

const API_KEY = 'tml-faults-key-0123456789';
const BASE = 'rx-test/bigram';
const ADAM = { learningRate: 0.05, beta1: 0.9, beta2: 0.95, eps: 1e-8 };
const PROMPT = [1, 2, 3];
const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.reverse()) await c();
  cleanups.length = 0;
});

/** The SDK's timings at about 1/100 (the stuck timeout, 120 min in the SDK, is 3 s here). */
const SCALED: TinkerBackendOptions['timing'] = {
  stuckTimeoutMs: 3000,
  appRetryBaseDelayMs: 5,
  appRetryMaxDelayMs: 40,
  billingPauseMs: 20,
  pollBackoffBaseMs: 5,
  pollBackoffMaxMs: 40,
  pollRetryDelayMs: 2,
};

async function setup(proxyOptions: FaultProxyOptions = {}, clientOptions: Partial<TinkerBackendOptions> = {}) {
  const backend = new InMemoryPolicyBackend();
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'rx-faults-'));
  const server = await startPolicyServer(policyServerConfig({ port: 0, dataDir, longPollMs: 200, apiKey: proxyOptions.jwt ? API_KEY : undefined }), backend, { logger: false });
  const proxy = await startFaultProxy(server.url, proxyOptions);
  const retries: TinkerRetryEvent[] = [];
  const warnings: string[] = [];
  const tinker = new TinkerBackend({
    baseUrl: proxy.url,
    apiKey: API_KEY,
    retries: 2,
    retryBaseDelayMs: 1,
    retryMaxDelayMs: 5,
    timeoutMs: 5000,
    timing: SCALED,
    onRetry: (e) => retries.push(e),
    logger: { warn: (m) => warnings.push(m) },
    ...clientOptions,
  });
  cleanups.push(async () => {
    await tinker.close();
    await proxy.close();
    await server.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });
  return { backend, proxy, tinker, retries, warnings };
}

/** `steps` RL steps: save sampler weights, open a sampler, sample, forward_backward, optim_step; the final logprobs. */
async function train(b: PolicyBackend, steps: number): Promise<(number | null)[]> {
  const tc = await b.createLoraTrainingClient({ baseModel: BASE, rank: 2, seed: 5 });
  for (let step = 1; step <= steps; step++) {
    const sc = await b.createSamplingClient(await tc.saveWeightsForSampler(`step-${step}`));
    const samples = await sc.sample(PROMPT, 2, { maxTokens: 4, temperature: 1, seed: step });
    const datums: Datum[] = samples.map((s, i) => {
      const all = [...PROMPT, ...s.tokens];
      const p = PROMPT.length - 1;
      return {
        inputTokens: all.slice(0, -1),
        targetTokens: all.slice(1),
        samplingLogprobs: [...new Array<number>(p).fill(0), ...s.logprobs],
        advantages: [...new Array<number>(p).fill(0), ...s.tokens.map(() => (i === 0 ? 1 : -1))],
      };
    });
    await tc.forwardBackward(datums, 'importance_sampling');
    await tc.optimStep(ADAM);
  }
  return (await b.createSamplingClient(await tc.saveWeightsForSampler('final'))).computeLogprobs([...PROMPT, 4, 5, 6]);
}

const reference = (steps: number): Promise<(number | null)[]> => train(float32Wire(new InMemoryPolicyBackend()), steps);

function inject(proxy: FaultProxy, path: string, status: number, times: number, extra: { forMs?: number; headers?: Record<string, string>; body?: string } = {}): void {
  proxy.inject({ path: `/api/v1/${path}`, times, forMs: extra.forMs, action: { kind: 'status', status, headers: extra.headers, body: extra.body ?? JSON.stringify({ detail: `injected ${status}` }) } });
}

describe('TinkerBackend through injected faults', () => {
  it('rides out 429/5xx/409 bursts longer than its HTTP retries, and lost answers, without a duplicated or lost step', async () => {
    const { backend, proxy, tinker, retries } = await setup();
    // a window of 429s (with retry-after-ms) on forward_backward: "a minute" of rate limiting at this scale
    inject(proxy, 'forward_backward', 429, Number.POSITIVE_INFINITY, { forMs: 400, headers: { 'retry-after-ms': '3' } });
    inject(proxy, 'optim_step', 503, 5);
    // the server runs the step, the answer is lost, 4 times: HTTP retries (same idempotency key), then an
    // application-level retry (new key, same seq_id): the server must run it once
    proxy.inject({ path: '/api/v1/optim_step', times: 4, action: { kind: 'reset-after' } });
    inject(proxy, 'save_weights_for_sampler', 409, 4);
    inject(proxy, 'retrieve_future', 500, 6);
    inject(proxy, 'retrieve_future', 429, 3);
    inject(proxy, 'create_sampling_session', 429, 4);
    inject(proxy, 'asample', 502, 4);
    inject(proxy, 'create_model', 504, 4);
    // answers lost after the server acted, more often than the HTTP retries: resends of the same request
    proxy.inject({ path: '/api/v1/create_sampling_session', times: 4, action: { kind: 'reset-after' } });
    proxy.inject({ path: '/api/v1/create_model', times: 4, action: { kind: 'reset-after' } });
    const started = Date.now();
    const remote = await train(tinker, 3);
    expect(Date.now() - started).toBeGreaterThanOrEqual(400);
    expect(remote).toEqual(await reference(3));
    expect(backend.calls).toMatchObject({ createLoraTrainingClient: 1, forwardBackward: 3, optimStep: 3 });
    for (const status of [429, 503, 409, 500, 502, 504]) expect(proxy.faulted.get(status) ?? 0).toBeGreaterThan(0);
    // more failures than the HTTP layer takes (3 attempts): the application-level loop carried them
    expect((proxy.hits.get('/api/v1/forward_backward') ?? 0) - 3).toBeGreaterThan(3);
    expect(retries.length).toBeGreaterThan(10);
  });

  it('goes on at once after a call the server refused: the refused seq_id stays used on both sides', async () => {
    const { backend, tinker } = await setup();
    const tc = await tinker.createLoraTrainingClient({ baseModel: BASE, rank: 2, seed: 5 });
    // beta1 1 passes the client's finiteness check; the server refuses it (400) and counts seq_id 1 as used
    await expect(tc.optimStep({ ...ADAM, beta1: 1 })).rejects.toThrow(/HTTP 400/);
    const started = Date.now();
    await expect(tc.optimStep(ADAM)).resolves.toEqual({ step: 1 });
    expect(Date.now() - started).toBeLessThan(1000);
    expect(backend.calls.optimStep).toBe(1);
  });

  it('gives up on a burst longer than its retry budget, with the status', async () => {
    const { proxy, tinker } = await setup({}, { timing: { ...SCALED, stuckTimeoutMs: 100 } });
    const tc = await tinker.createLoraTrainingClient({ baseModel: BASE, rank: 2, seed: 5 });
    inject(proxy, 'optim_step', 503, Number.POSITIVE_INFINITY, { forMs: 5000 });
    const started = Date.now();
    await expect(tc.optimStep(ADAM)).rejects.toThrow(/HTTP 503/);
    expect(Date.now() - started).toBeLessThan(2000);
  });

  it('waits out a 429 storm longer than the old 5-minute budget (no count limit), with a progress line while waiting', async () => {
    // at 1/100: a "10-minute" storm on submit and on the result, a report "every minute", a "20-minute" stuck timeout
    const { backend, proxy, tinker, warnings } = await setup({}, { timing: { ...SCALED, stuckTimeoutMs: 12_000, waitReportEveryMs: 600 } });
    const tc = await tinker.createLoraTrainingClient({ baseModel: BASE, rank: 2, seed: 5 });
    inject(proxy, 'optim_step', 429, Number.POSITIVE_INFINITY, { forMs: 6000 });
    const started = Date.now();
    await expect(tc.optimStep(ADAM)).resolves.toEqual({ step: 1 });
    expect(Date.now() - started).toBeGreaterThanOrEqual(6000);
    expect(backend.calls.optimStep).toBe(1);
    expect(proxy.faulted.get(429)).toBeGreaterThan(10);
    const waits = warnings.filter((w) => /^Tinker: HTTP 429 on optim_step for \d+ s, retrying \(the run stops at the stuck timeout, 12 s; rx run --resume continues it\)$/.test(w));
    expect(waits.length).toBeGreaterThanOrEqual(5);
    expect(warnings).toContainEqual(expect.stringMatching(/^Tinker: optim_step went through after \d+ s of retries$/));
  });

  it('stops at the stuck timeout with TinkerStuckError naming the wait and the last failure', async () => {
    const { proxy, tinker } = await setup({}, { timing: { ...SCALED, stuckTimeoutMs: 400, waitReportEveryMs: 100 } });
    const tc = await tinker.createLoraTrainingClient({ baseModel: BASE, rank: 2, seed: 5 });
    inject(proxy, 'optim_step', 503, Number.POSITIVE_INFINITY, { forMs: 5000 });
    const err = await tc.optimStep(ADAM).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TinkerStuckError);
    expect((err as Error).message).toMatch(/^Tinker optim_step made no progress for 0 s \(the stuck timeout; last: HTTP 503\)$/);
  });

  it('pauses on 402 (billing) and resumes, counting each step once', async () => {
    const { backend, proxy, tinker, warnings } = await setup();
    inject(proxy, 'optim_step', 402, Number.POSITIVE_INFINITY, { forMs: 300 });
    inject(proxy, 'retrieve_future', 402, 3);
    const remote = await train(tinker, 2);
    expect(remote).toEqual(await reference(2));
    expect(backend.calls).toMatchObject({ forwardBackward: 2, optimStep: 2 });
    expect(proxy.faulted.get(402)).toBeGreaterThan(3);
    expect(warnings.some((w) => /paused by billing \(HTTP 402\)/.test(w))).toBe(true);
  });

  it('trades the key for a JWT when client/config asks, refreshes it before it expires, and never sends an expired one', async () => {
    const { backend, proxy, tinker } = await setup({ jwt: { apiKey: API_KEY, lifetimeMs: 600 } }, { timing: { ...SCALED, jwtRefreshBeforeExpiryMs: 350 } });
    backend.opDelayMs = 60;
    const remote = await train(tinker, 4);
    expect(remote).toEqual(await reference(4));
    expect(backend.calls).toMatchObject({ forwardBackward: 4, optimStep: 4 });
    expect(proxy.jwtsIssued).toBeGreaterThanOrEqual(3);
    expect(tinker.jwtsFetched).toBe(proxy.jwtsIssued);
    expect(proxy.faulted.get(401) ?? 0).toBe(0);
  });

  it('(control) the gateway refuses the raw key and an expired JWT on work routes, so the run above used live JWTs', async () => {
    const { proxy } = await setup({ jwt: { apiKey: API_KEY, lifetimeMs: 200 } });
    const post = (route: string, key: string) =>
      fetch(`${proxy.url}/api/v1/${route}`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': key }, body: JSON.stringify({ sdk_version: 'x', tags: [] }) });
    expect((await post('create_session', API_KEY)).status).toBe(401);
    const { jwt } = (await (await post('auth/token', API_KEY)).json()) as { jwt: string };
    expect((await post('create_session', jwt)).status).toBe(200);
    await new Promise((r) => setTimeout(r, 250));
    expect((await post('create_session', jwt)).status).toBe(401);
    expect(proxy.faulted.get(401)).toBe(2);
  });

  it('detects a lost session by status (any wording) and carries on in a new one', async () => {
    const { backend, proxy, tinker, warnings } = await setup({}, { heartbeatIntervalMs: 30 });
    const first = await tinker.createLoraTrainingClient({ baseModel: BASE, rank: 2, seed: 5 });
    // the service forgets the session: the heartbeat answers 404, then a call naming its model, worded freely
    inject(proxy, 'session_heartbeat', 404, 1, { body: JSON.stringify({ detail: 'Session expired' }) });
    for (let i = 0; i < 200 && warnings.length === 0; i++) await new Promise((r) => setTimeout(r, 10));
    expect(warnings).toEqual(['the server no longer knows this session; the next call starts a new one']);
    // a client of the lost session fails at once, without opening a session its model never lived in
    const lost = await first.optimStep(ADAM).catch((e: unknown) => e);
    expect(lost).toBeInstanceOf(TinkerSessionLostError);
    expect(proxy.hits.get('/api/v1/optim_step')).toBeUndefined();
    // the next run opens a new session; there a call naming its model answers 404 (worded freely): lost again
    inject(proxy, 'optim_step', 404, 1, { body: JSON.stringify({ message: 'no such thing' }) });
    await expect(train(tinker, 1)).rejects.toBeInstanceOf(TinkerSessionLostError);
    const remote = await train(tinker, 2);
    expect(remote).toEqual(await reference(2));
    expect(proxy.hits.get('/api/v1/create_session')).toBe(3);
    expect(backend.calls).toMatchObject({ createLoraTrainingClient: 3, forwardBackward: 3, optimStep: 2 });
  });

  it('makes a client asked for after an unnoticed session loss in a new session (create_model or create_sampling_session answered 404)', async () => {
    // the heartbeat has not told yet: the creating call itself meets the loss, and is made once more on a new session
    const { backend, proxy, tinker, warnings } = await setup();
    const tc = await tinker.createLoraTrainingClient({ baseModel: BASE, rank: 2, seed: 5 });
    const path0 = await tc.saveWeightsForSampler('s0');
    inject(proxy, 'create_model', 404, 1, { body: JSON.stringify({ detail: 'Session expired' }) });
    const fresh = await tinker.createLoraTrainingClient({ baseModel: BASE, rank: 2, seed: 5 });
    await expect(fresh.optimStep(ADAM)).resolves.toEqual({ step: 1 });
    expect(proxy.hits.get('/api/v1/create_session')).toBe(2);
    inject(proxy, 'create_sampling_session', 404, 1, { body: '{}' });
    const sc = await tinker.createSamplingClient(path0);
    await expect(sc.sample(PROMPT, 1, { maxTokens: 2, temperature: 1, seed: 1 })).resolves.toHaveLength(1);
    expect(proxy.hits.get('/api/v1/create_session')).toBe(3);
    expect(warnings.filter((w) => / the server no longer knows this session \(.*\); opening a new session$/.test(w)).map((w) => w.split(':')[0])).toEqual(['create_model', 'create_sampling_session']);
    expect(backend.calls).toMatchObject({ createLoraTrainingClient: 2, optimStep: 1 });
  });
});
