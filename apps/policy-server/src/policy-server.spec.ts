// The policy server at the protocol level (raw HTTP): seq_id ordering and conflicts, futures, errors as JSON,
// graceful close, the tinker:// path index across restarts, /health and /metrics.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { PROTOBUF_CONTENT_TYPE, TinkerBackend, datumToWire, decodeForwardBackwardOutput, encodeForwardBackwardRequest, zstdCompress } from '@rx/backend';
import { InMemoryPolicyBackend } from '@rx/backend/testing';
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
    // the same seq_id with the same body is a resend (the SDK's application-level retry): the first future again
    const resend = await call(server, 'optim_step', { model_id: modelId, seq_id: 2, adam_params: adam });
    expect(resend).toEqual({ status: 200, json: { request_id: optim.json.request_id, model_id: modelId } });
    const reuse = await call(server, 'optim_step', { model_id: modelId, seq_id: 2, adam_params: { ...adam, learning_rate: 0.02 } });
    expect(reuse).toEqual({ status: 409, json: { error: 'optim_step: seq_id 2 was already used' } });
    expect(backend.calls.optimStep).toBe(1);
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
    // the refused seq_id 1 was consumed (as on the service: the SDK never resends it), so seq_id 2 runs at once
    const again = await call(server, 'forward_backward', { model_id: modelId, seq_id: 1, forward_backward_input: { data: [datum], loss_fn: 'importance_sampling' } });
    expect(again).toEqual({ status: 409, json: { error: 'forward_backward: seq_id 1 was already used' } });
    const fb = await call(server, 'forward_backward', { model_id: modelId, seq_id: 2, forward_backward_input: { data: [datum], loss_fn: 'importance_sampling' } });
    expect(await result(server, fb.json.request_id)).toMatchObject({ metrics: { 'loss:sum': expect.any(Number) } });
  });

  it('a refused optim_step does not stall the next one; a seq_id that never comes fails the waiting request after the bound', async () => {
    const backend = new InMemoryPolicyBackend();
    const server = await serve(backend, { seqGapTimeoutMs: 200, longPollMs: 100 });
    const { modelId } = await model(server);
    const refused = await call(server, 'optim_step', { model_id: modelId, seq_id: 1, adam_params: { ...adam, grad_clip_norm: 1 } });
    expect(refused.status).toBe(400);
    const next = await call(server, 'optim_step', { model_id: modelId, seq_id: 2, adam_params: adam });
    expect(await result(server, next.json.request_id)).toEqual({ metrics: { 'step:max': 1 } });
    // seq_id 3 never arrives: 4 waits for it, then fails after 200 ms; 5 runs; a late 3 is refused
    const started = Date.now();
    const waiting = await call(server, 'optim_step', { model_id: modelId, seq_id: 4, adam_params: adam });
    expect(await result(server, waiting.json.request_id)).toEqual({
      error: 'seq_id 4 waited 200 ms for seq_id 3, which never arrived; they are skipped and this request is not run',
      category: 'user',
    });
    expect(Date.now() - started).toBeGreaterThanOrEqual(190);
    const after = await call(server, 'optim_step', { model_id: modelId, seq_id: 5, adam_params: adam });
    expect(await result(server, after.json.request_id)).toEqual({ metrics: { 'step:max': 2 } });
    expect((await call(server, 'optim_step', { model_id: modelId, seq_id: 3, adam_params: adam })).status).toBe(409);
    expect(backend.calls.optimStep).toBe(2);
  });

  it('takes forward_backward as protobuf (plain and zstd) and answers results as protobuf to a client that accepts it', async () => {
    const backend = new InMemoryPolicyBackend();
    const server = await serve(backend);
    const { modelId } = await model(server);
    const json = await call(server, 'forward_backward', { model_id: modelId, seq_id: 1, forward_backward_input: { data: [datum], loss_fn: 'importance_sampling' } });
    const viaJson = await result(server, json.json.request_id);
    const request = { model_id: modelId, seq_id: 2, forward_backward_input: { data: [datum], loss_fn: 'importance_sampling' as const } };
    for (const [seq, compressed] of [[2, false], [3, true]] as const) {
      const plain = encodeForwardBackwardRequest({ ...request, seq_id: seq }, false);
      const res = await fetch(`${server.url}/api/v1/forward_backward`, {
        method: 'POST',
        headers: { 'content-type': PROTOBUF_CONTENT_TYPE, ...(compressed ? { 'content-encoding': 'zstd' } : {}) },
        body: compressed ? await zstdCompress(plain) : plain,
      });
      expect(res.status).toBe(200);
      const { request_id } = (await res.json()) as { request_id: string };
      let answer: Response;
      do {
        answer = await fetch(`${server.url}/api/v1/retrieve_future`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', accept: PROTOBUF_CONTENT_TYPE },
          body: JSON.stringify({ request_id }),
        });
      } while (answer.headers.get('content-type')?.startsWith('application/json'));
      expect(answer.headers.get('content-type')).toBe(PROTOBUF_CONTENT_TYPE);
      const decoded = decodeForwardBackwardOutput(new Uint8Array(await answer.arrayBuffer()));
      // the same datum again (gradients accumulate, weights unchanged): the JSON answer's logprobs as float32
      const lp = (viaJson.loss_fn_outputs as { logprobs: { data: number[] } }[])[0]!.logprobs.data;
      expect(decoded).toEqual({ ...viaJson, loss_fn_outputs: [{ logprobs: { data: lp.map(Math.fround), dtype: 'float32', shape: [3] } }] });
    }
    expect(backend.calls.forwardBackward).toBe(3);
    const garbage = await fetch(`${server.url}/api/v1/forward_backward`, { method: 'POST', headers: { 'content-type': PROTOBUF_CONTENT_TYPE }, body: new Uint8Array([0x0a, 0xff]) });
    expect([garbage.status, ((await garbage.json()) as { error: string }).error]).toEqual([400, expect.stringMatching(/^forward_backward: forward_backward: not a ForwardBackwardRequest protobuf/)]);
    const notZstd = await fetch(`${server.url}/api/v1/forward_backward`, { method: 'POST', headers: { 'content-type': PROTOBUF_CONTENT_TYPE, 'content-encoding': 'zstd' }, body: new Uint8Array([1, 2, 3]) });
    expect(notZstd.status).toBe(400);
  });

  it('forward (JSON route and protobuf forward_only) keeps no gradient; load_weights without the optimizer; weights_info; capabilities', async () => {
    const backend = new InMemoryPolicyBackend();
    const server = await serve(backend);
    const { sessionId, modelId } = await model(server);
    const fwd = await call(server, 'forward', { model_id: modelId, seq_id: 1, forward_input: { data: [datum], loss_fn: 'importance_sampling' } });
    const first = await result(server, fwd.json.request_id);
    expect(first).toMatchObject({ loss_fn_outputs: [{ logprobs: { dtype: 'float32', shape: [3] } }] });
    const fwdOnly = encodeForwardBackwardRequest({ model_id: modelId, seq_id: 2, forward_backward_input: { data: [datum], loss_fn: 'importance_sampling' } }, true);
    const res = await fetch(`${server.url}/api/v1/forward_backward`, { method: 'POST', headers: { 'content-type': PROTOBUF_CONTENT_TYPE }, body: fwdOnly });
    await result(server, ((await res.json()) as { request_id: string }).request_id);
    expect([backend.calls.forward, backend.calls.forwardBackward]).toEqual([2, 0]);
    // no gradient was kept: an optim_step (no weight decay) leaves the weights, so a forward gives the same logprobs
    const opt = await call(server, 'optim_step', { model_id: modelId, seq_id: 3, adam_params: adam });
    await result(server, opt.json.request_id);
    const fwdAgain = await call(server, 'forward', { model_id: modelId, seq_id: 4, forward_input: { data: [datum], loss_fn: 'importance_sampling' } });
    expect(await result(server, fwdAgain.json.request_id)).toEqual(first);
    const saved = await call(server, 'save_weights', { model_id: modelId, seq_id: 5, path: 'ckpt' });
    const savedPath = (await result(server, saved.json.request_id)).path as string;
    expect(await call(server, 'weights_info', { tinker_path: savedPath })).toEqual({
      status: 200,
      json: { base_model: 'rx-test/bigram', is_lora: true, lora_rank: 2, train_unembed: true, train_mlp: true, train_attn: true },
    });
    expect((await call(server, 'weights_info', { tinker_path: `tinker://${modelId}/weights/nope` })).status).toBe(404);
    // a second client loads the weights only: its optimizer starts afresh (step 1 after one optim_step)
    const created = await call(server, 'create_model', { session_id: sessionId, model_seq_id: 1, base_model: 'rx-test/bigram', lora_config: { rank: 2 } });
    const second = (await result(server, created.json.request_id)).model_id as string;
    const load = await call(server, 'load_weights', { model_id: second, seq_id: 1, path: savedPath, optimizer: false });
    expect(await result(server, load.json.request_id)).toEqual({ path: savedPath, type: 'load_weights' });
    expect(backend.calls.loadWeights).toBe(1);
    const step = await call(server, 'optim_step', { model_id: second, seq_id: 2, adam_params: adam });
    expect(await result(server, step.json.request_id)).toEqual({ metrics: { 'step:max': 1 } });
    expect(await call(server, 'get_server_capabilities')).toEqual({ status: 200, json: { supported_models: [{ model_name: 'rx-test/bigram', max_context_length: 262144, max_lora_rank: 128 }] } });
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
    expect(JSON.parse(fs.readFileSync(path.join(dataDir, 'tinker-paths.json'), 'utf8')).paths[weights].loraRank).toBeUndefined();
    const second = await serve(backend, { dataDir });
    const b = new TinkerBackend({ baseUrl: second.url, apiKey: 'local-key-1', retries: 0 });
    cleanups.push(() => b.close());
    expect(await (await b.createSamplingClient(weights)).computeLogprobs([1, 2, 3])).toEqual(before);
  });

  it('serves /health from the backend and Prometheus /metrics', async () => {
    const backend = new InMemoryPolicyBackend();
    const server = await serve(backend);
    const health = await fetch(`${server.url}/health`);
    // @rx/service-host's report: each probe yes/no, the backend's kind beside it
    expect([health.status, await health.json()]).toEqual([200, { status: 'ok', backend: true, backendKind: 'embedded' }]);
    await call(server, 'create_session', { sdk_version: 'test' });
    const scrape = await fetch(`${server.url}/metrics`);
    expect(scrape.headers.get('content-type')).toMatch(/^text\/plain;.*version=0\.0\.4/);
    const metrics = await scrape.text();
    expect(metrics).toContain('rx_policy_server_requests_total{endpoint="create_session",status="200",service="policy-server"} 1');
    expect(metrics).toContain('rx_policy_server_futures_pending{service="policy-server"} 0');
    expect(metrics).toContain('process_cpu_user_seconds_total');
    expect((await fetch(`${server.url}/health/ready`)).status).toBe(200);
    await backend.close();
    const down = await fetch(`${server.url}/health`);
    // the error filter passes the report through: it has its `error`
    expect([down.status, await down.json()]).toEqual([503, { status: 'unavailable', backend: false, backendKind: 'embedded', error: 'backend does not answer' }]);
    // terminus: live while the backend (its one dependency) is down; ready is 503 (the error filter renders { error })
    expect((await fetch(`${server.url}/health/live`)).status).toBe(200);
    expect((await fetch(`${server.url}/health/ready`)).status).toBe(503);
  });
});
