// The policy server at the protocol level (raw HTTP): seq_id ordering and conflicts, futures, errors as JSON,
// graceful close, the tinker:// path index across restarts, /health and /metrics.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { InMemoryPolicyBackend, TinkerBackend, datumToWire } from '@rx/backend';
import { policyServerConfig, type PolicyServerConfig } from './config';
import { startPolicyServer, type PolicyServer } from './policy-server';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.reverse()) await c();
  cleanups.length = 0;
});

function tempDir(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rx-policy-'));
  cleanups.push(() => fs.rmSync(dir, { recursive: true, force: true }));
  return dir;
}

async function serve(backend: InMemoryPolicyBackend, config: Partial<PolicyServerConfig> = {}): Promise<PolicyServer> {
  const server = await startPolicyServer(policyServerConfig({ port: 0, dataDir: tempDir(), longPollMs: 1000, ...config }), backend, { logger: false });
  cleanups.push(() => server.close());
  return server;
}

async function call(server: PolicyServer, name: string, body?: unknown, headers: Record<string, string> = {}): Promise<{ status: number; json: Record<string, unknown> }> {
  const res = await fetch(`${server.url}/api/v1/${name}`, {
    method: body === undefined ? 'GET' : 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
  });
  return { status: res.status, json: (await res.json()) as Record<string, unknown> };
}

async function result(server: PolicyServer, requestId: unknown): Promise<Record<string, unknown>> {
  for (;;) {
    const { json } = await call(server, 'retrieve_future', { request_id: requestId });
    if (json.type !== 'try_again') return json;
  }
}

async function model(server: PolicyServer): Promise<{ sessionId: string; modelId: string }> {
  const session = await call(server, 'create_session', { sdk_version: 'test', tags: [] });
  const sessionId = session.json.session_id as string;
  const created = await call(server, 'create_model', { session_id: sessionId, model_seq_id: 0, base_model: 'rx-test/bigram', lora_config: { rank: 2, seed: 1 } });
  const done = await result(server, created.json.request_id);
  return { sessionId, modelId: done.model_id as string };
}

const datum = datumToWire({ inputTokens: [1, 2, 3], targetTokens: [2, 3, 4], samplingLogprobs: [0, -2, -2], advantages: [0, 1, 1] });
const adam = { learning_rate: 0.01, beta1: 0.9, beta2: 0.95, eps: 1e-8 };

describe('policy server', () => {
  it("runs a model's requests in seq_id order, waiting for a missing one", async () => {
    const backend = new InMemoryPolicyBackend();
    const server = await serve(backend, { longPollMs: 60 });
    const { modelId } = await model(server);
    const optim = await call(server, 'optim_step', { model_id: modelId, seq_id: 2, adam_params: adam });
    expect(optim.status).toBe(200);
    await new Promise((r) => setTimeout(r, 50));
    const waiting = await call(server, 'retrieve_future', { request_id: optim.json.request_id });
    expect(waiting.json).toEqual({ type: 'try_again', request_id: optim.json.request_id, queue_state: 'active' });
    expect(backend.calls.optimStep).toBe(0);
    const fb = await call(server, 'forward_backward', { model_id: modelId, seq_id: 1, forward_backward_input: { data: [datum], loss_fn: 'importance_sampling' } });
    const fbResult = await result(server, fb.json.request_id);
    expect(fbResult).toMatchObject({ loss_fn_output_type: 'importance_sampling', metrics: { 'loss:sum': expect.any(Number) } });
    expect(await result(server, optim.json.request_id)).toEqual({ metrics: { 'step:max': 1 } });
    const reuse = await call(server, 'optim_step', { model_id: modelId, seq_id: 2, adam_params: adam });
    expect(reuse).toEqual({ status: 409, json: { error: 'optim_step: seq_id 2 was already used' } });
  });

  it('answers errors as one JSON message: validation, unknown ids, malformed JSON, unknown routes', async () => {
    const server = await serve(new InMemoryPolicyBackend());
    const { modelId } = await model(server);
    expect(await call(server, 'forward_backward', { model_id: modelId, seq_id: 1, forward_backward_input: { data: [{}], loss_fn: 'importance_sampling' } })).toEqual({
      status: 400,
      json: { error: 'invalid forward_backward request: forward_backward_input.data.0.model_input: Required; forward_backward_input.data.0.loss_fn_inputs: Required' },
    });
    expect(await call(server, 'forward_backward', { model_id: modelId, seq_id: 1, forward_backward_input: { data: [datum], loss_fn: 'ppo' } })).toEqual({
      status: 400,
      json: { error: "loss_fn 'ppo' is not supported by this server (importance_sampling only)" },
    });
    // a CSR tensor is expanded only within the token limit of one request (262144 by default)
    const sparse = { data: [1], dtype: 'float32', shape: [1, 2 ** 32], sparse_crow_indices: [0, 1], sparse_col_indices: [0] };
    expect(await call(server, 'forward_backward', { model_id: modelId, seq_id: 1, forward_backward_input: { data: [{ ...datum, loss_fn_inputs: { ...datum.loss_fn_inputs, advantages: sparse } }], loss_fn: 'importance_sampling' } })).toEqual({
      status: 400,
      json: { error: `forward_backward: datum 0: loss_fn_inputs.advantages: sparse shape [1, ${2 ** 32}] holds ${2 ** 32} values; at most 262144 are accepted (RX_POLICY_MAX_TOKENS_PER_REQUEST)` },
    });
    expect(await call(server, 'optim_step', { model_id: 'nope', seq_id: 1, adam_params: adam })).toEqual({ status: 404, json: { error: "unknown model_id 'nope'" } });
    expect(await call(server, 'retrieve_future', { request_id: 'req_999' })).toEqual({ status: 404, json: { error: "unknown request_id 'req_999'" } });
    expect((await call(server, 'create_session', '{"sdk_version":')).json.error).toMatch(/^request body is not valid JSON/);
    expect(await call(server, 'no_such_route', {})).toEqual({ status: 404, json: { error: 'Cannot POST /api/v1/no_such_route' } });
    // the refused seq_id 1 was not consumed: it still runs
    const fb = await call(server, 'forward_backward', { model_id: modelId, seq_id: 1, forward_backward_input: { data: [datum], loss_fn: 'importance_sampling' } });
    expect(fb.status).toBe(200);
  });

  it('expires finished futures after their TTL (410)', async () => {
    const server = await serve(new InMemoryPolicyBackend(), { futureTtlMs: 30 });
    const session = await call(server, 'create_session', { sdk_version: 'test' });
    const created = await call(server, 'create_model', { session_id: session.json.session_id, model_seq_id: 0, base_model: 'rx-test/bigram', lora_config: { rank: 2 } });
    await result(server, created.json.request_id);
    await new Promise((r) => setTimeout(r, 120));
    expect((await call(server, 'retrieve_future', { request_id: created.json.request_id })).status).toBe(410);
  });

  it('answers waiting long-polls at once on close and lets running work finish', async () => {
    const backend = new InMemoryPolicyBackend();
    const server = await startPolicyServer(policyServerConfig({ port: 0, dataDir: tempDir(), longPollMs: 20_000 }), backend, { logger: false });
    const { modelId } = await model(server);
    backend.opDelayMs = 300;
    const submitted = Date.now();
    const fb = await call(server, 'forward_backward', { model_id: modelId, seq_id: 1, forward_backward_input: { data: [datum], loss_fn: 'importance_sampling' } });
    const poll = call(server, 'retrieve_future', { request_id: fb.json.request_id });
    await new Promise((r) => setTimeout(r, 50));
    const closeCalled = Date.now();
    const closed = server.close();
    expect((await poll).json.type).toBe('try_again');
    expect(Date.now() - closeCalled).toBeLessThan(200);
    await closed;
    // the work (300 ms, started after the submission) finished before the server closed
    expect(Date.now() - submitted).toBeGreaterThanOrEqual(295);
    expect(backend.calls.forwardBackward).toBe(1);
    await expect(fetch(`${server.url}/health`)).rejects.toThrow();
  });

  it('keeps tinker:// paths across a restart on the same data directory', async () => {
    const backend = new InMemoryPolicyBackend();
    const dataDir = tempDir();
    const first = await startPolicyServer(policyServerConfig({ port: 0, dataDir }), backend, { logger: false });
    const a = new TinkerBackend({ baseUrl: first.url, apiKey: 'local-key-1', retries: 0 });
    const tc = await a.createLoraTrainingClient({ baseModel: 'rx-test/bigram', rank: 2, seed: 4 });
    const weights = await tc.saveWeightsForSampler('final');
    const before = await (await a.createSamplingClient(weights)).computeLogprobs([1, 2, 3]);
    await a.close();
    await first.close();
    expect(JSON.parse(fs.readFileSync(path.join(dataDir, 'tinker-paths.json'), 'utf8')).paths[weights]).toEqual({
      backendPath: expect.stringMatching(/^memory:\/\//),
      baseModel: 'rx-test/bigram',
    });
    const second = await serve(backend, { dataDir });
    const b = new TinkerBackend({ baseUrl: second.url, apiKey: 'local-key-1', retries: 0 });
    cleanups.push(() => b.close());
    expect(await (await b.createSamplingClient(weights)).computeLogprobs([1, 2, 3])).toEqual(before);
  });

  it('serves /health from the backend and Prometheus /metrics', async () => {
    const backend = new InMemoryPolicyBackend();
    const server = await serve(backend);
    const health = await fetch(`${server.url}/health`);
    expect([health.status, await health.json()]).toEqual([200, { status: 'ok', backend: 'embedded' }]);
    await call(server, 'create_session', { sdk_version: 'test' });
    const metrics = await (await fetch(`${server.url}/metrics`)).text();
    expect(metrics).toContain('rx_policy_server_requests_total{endpoint="create_session",status="200",service="policy-server"} 1');
    expect(metrics).toContain('rx_policy_server_futures_pending{service="policy-server"} 0');
    expect(metrics).toContain('process_cpu_user_seconds_total');
    expect((await fetch(`${server.url}/health/ready`)).status).toBe(200);
    await backend.close();
    const down = await fetch(`${server.url}/health`);
    expect(down.status).toBe(503);
    // terminus: live while the backend (its one dependency) is down; ready is 503 (the error filter renders { error })
    expect((await fetch(`${server.url}/health/live`)).status).toBe(200);
    expect((await fetch(`${server.url}/health/ready`)).status).toBe(503);
  });
});
