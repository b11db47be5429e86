// The policy server's bounds over real HTTP: live models, LoRA rank, unfetched results and their bytes, slow
// requests (headers and body), connections; and values a model cannot take (rank, token ids, context length,
// seeds) refused with 400 before any work, instead of a future that fails with category 'server'.
import net from 'node:net';
import { datumToWire } from '@rx/backend';
import { InMemoryPolicyBackend } from '@rx/backend/testing';
import { PolicyServerConfigError, parsePolicyServerConfig } from './config';
import type { PolicyServer } from './policy-server';
import { PolicyServerContext } from './policy-server.context';
import { api, futureResult, newModel, policyServerHarness } from './testing/policy-server.harness';

const harness = policyServerHarness();
afterEach(() => harness.close());

const BASE = 'rx-test/bigram';
const wire = (tokens: number[]) => datumToWire({ inputTokens: tokens, targetTokens: tokens.map((t) => (t + 1) % 32), samplingLogprobs: tokens.map(() => -1), advantages: tokens.map(() => 1) });
const fbBody = (modelId: string, seq: number, tokens: number[] = [1, 2, 3]) => ({ model_id: modelId, seq_id: seq, forward_backward_input: { data: [wire(tokens)], loss_fn: 'importance_sampling' } });

async function createModel(server: PolicyServer, sessionId: string, seq: number, lora: Record<string, unknown> = { rank: 2 }) {
  return api(server, 'create_model', { session_id: sessionId, model_seq_id: seq, base_model: BASE, lora_config: lora });
}

/** A raw connection; resolves with what the server sent before it closed the connection. */
function openSocket(server: PolicyServer, send: string): { socket: net.Socket; closed: Promise<{ data: string; ms: number }> } {
  const started = Date.now();
  const socket = net.connect(server.port, '127.0.0.1', () => socket.write(send));
  let data = '';
  socket.on('data', (d: Buffer) => (data += d.toString()));
  socket.on('error', () => undefined);
  const closed = new Promise<{ data: string; ms: number }>((resolve) => socket.on('close', () => resolve({ data, ms: Date.now() - started })));
  return { socket, closed };
}

describe('policy server bounds', () => {
  jest.setTimeout(30_000);

  it('reads every bound from the environment with defaults, and refuses a server open to the network without a key', () => {
    expect(parsePolicyServerConfig({ RX_POLICY_MAX_MODELS: '3', RX_POLICY_MAX_LORA_RANK: '16', RX_POLICY_MAX_UNFETCHED_RESULTS: '9', RX_POLICY_MAX_UNFETCHED_RESULT_BYTES: '1000', RX_POLICY_REQUEST_TIMEOUT_MS: '5000', RX_POLICY_HEADERS_TIMEOUT_MS: '2000', RX_POLICY_MAX_CONNECTIONS: '7' })).toMatchObject({
      maxModels: 3, maxLoraRank: 16, maxUnfetchedResults: 9, maxUnfetchedResultBytes: 1000, requestTimeoutMs: 5000, headersTimeoutMs: 2000, maxConnections: 7,
    });
    expect(() => parsePolicyServerConfig({ RX_POLICY_MAX_MODELS: '0' })).toThrow('RX_POLICY_MAX_MODELS must be an integer >= 1');
    expect(() => parsePolicyServerConfig({ RX_POLICY_HEADERS_TIMEOUT_MS: '9000', RX_POLICY_REQUEST_TIMEOUT_MS: '5000' })).toThrow('RX_POLICY_HEADERS_TIMEOUT_MS must be at most RX_POLICY_REQUEST_TIMEOUT_MS');
    expect(() => parsePolicyServerConfig({ HOST: '0.0.0.0' })).toThrow(new PolicyServerConfigError('policy-server configuration: RX_POLICY_API_KEY is required when HOST (0.0.0.0) is not a loopback address'));
    expect(parsePolicyServerConfig({ HOST: '0.0.0.0', RX_POLICY_API_KEY: 'k'.repeat(32) }).host).toBe('0.0.0.0');
    for (const host of ['127.0.0.1', '127.1.2.3', '::1', '[::1]', 'localhost']) expect(parsePolicyServerConfig({ HOST: host }).apiKey).toBeUndefined();
  });

  it('holds at most RX_POLICY_MAX_MODELS live models (429), and room comes back with unload_model', async () => {
    const backend = new InMemoryPolicyBackend();
    const server = await harness.serve(backend, { maxModels: 2 });
    const { sessionId, modelId } = await newModel(server);
    await futureResult(server, (await createModel(server, sessionId, 1)).json.request_id);
    const third = await createModel(server, sessionId, 2);
    expect(third).toMatchObject({ status: 429, json: { error: 'create_model: 2 models are alive; this server holds at most 2 (RX_POLICY_MAX_MODELS): unload_model one first' } });
    expect(backend.calls.createLoraTrainingClient).toBe(2);
    await futureResult(server, (await api(server, 'unload_model', { model_id: modelId })).json.request_id);
    expect((await futureResult(server, (await createModel(server, sessionId, 2)).json.request_id)).type).toBe('create_model');
  });

  it('refuses a LoRA rank above RX_POLICY_MAX_LORA_RANK or the model limit, and an unsafe seed, with 400 before any work', async () => {
    const backend = new InMemoryPolicyBackend({ maxLoraRank: 8 });
    const server = await harness.serve(backend, { maxLoraRank: 16 });
    const { sessionId } = await newModel(server);
    const calls = backend.calls.createLoraTrainingClient;
    expect(await createModel(server, sessionId, 1, { rank: 8 })).toMatchObject({ status: 200 });
    expect(await createModel(server, sessionId, 2, { rank: 9 })).toMatchObject({ status: 400, json: { error: `create_model: lora_config.rank 9 is above this server's limit of 8 (the limit of ${BASE})` } });
    const strict = await harness.serve(new InMemoryPolicyBackend(), { maxLoraRank: 4 });
    const s2 = await newModel(strict);
    expect(await createModel(strict, s2.sessionId, 1, { rank: 256 })).toMatchObject({ status: 400, json: { error: "create_model: lora_config.rank 256 is above this server's limit of 4 (RX_POLICY_MAX_LORA_RANK)" } });
    expect(await createModel(server, sessionId, 3, { rank: 2, seed: 2 ** 60 })).toMatchObject({ status: 400, json: { error: expect.stringMatching(/^create_model: lora_config.seed 1152921504606847000 is not a safe integer/) } });
    expect(await api(server, 'create_model', { session_id: sessionId, model_seq_id: 4, base_model: 'no/such', lora_config: { rank: 2 } })).toMatchObject({ status: 400, json: { error: expect.stringContaining("unknown base model 'no/such'") } });
    expect(backend.calls.createLoraTrainingClient).toBe(calls + 1);
  });

  it('refuses token ids outside the vocabulary, sequences beyond the context and unsafe sampling seeds with 400, running nothing', async () => {
    const backend = new InMemoryPolicyBackend({ vocabSize: 32, contextLength: 8 });
    const server = await harness.serve(backend);
    const { modelId } = await newModel(server);
    expect(await api(server, 'forward_backward', fbBody(modelId, 1, [1, 2, 32]))).toMatchObject({
      status: 400, json: { error: `forward_backward: datum 0 model_input has token id 32, outside the vocabulary of ${BASE} (0..31)` },
    });
    expect(await api(server, 'forward_backward', fbBody(modelId, 1, [1, 2, 3, 4, 5, 6, 7, 8, 9]))).toMatchObject({
      status: 400, json: { error: `forward_backward: datum 0 model_input holds 9 tokens; ${BASE} takes at most 8` },
    });
    expect(backend.calls.forwardBackward).toBe(0);
    // the refused seq_id 1 was consumed (#12: as on the service, the SDK never resends it), so seq_id 2 runs at once
    expect(await futureResult(server, (await api(server, 'forward_backward', fbBody(modelId, 2))).json.request_id)).toMatchObject({ loss_fn_output_type: 'importance_sampling' });
    const saved = await futureResult(server, (await api(server, 'save_weights_for_sampler', { model_id: modelId, seq_id: 3, path: 's' })).json.request_id);
    const sample = (tokens: number[], seed?: number) => ({ model_path: saved.path, prompt: { chunks: [{ type: 'encoded_text', tokens }] }, num_samples: 1, sampling_params: { max_tokens: 2, temperature: 1, ...(seed === undefined ? {} : { seed }) } });
    expect(await api(server, 'asample', sample([1, 99]))).toMatchObject({ status: 400, json: { error: `asample: the prompt has token id 99, outside the vocabulary of ${BASE} (0..31)` } });
    expect(await api(server, 'asample', sample(new Array(9).fill(1)))).toMatchObject({ status: 400, json: { error: `asample: the prompt holds 9 tokens; ${BASE} takes at most 8` } });
    expect(await api(server, 'asample', sample([1, 2], 2 ** 60))).toMatchObject({ status: 400, json: { error: expect.stringMatching(/^asample: sampling_params.seed \d+ is not a safe integer/) } });
    expect(backend.calls.sample).toBe(0);
    expect(await futureResult(server, (await api(server, 'asample', sample([1, 2], 7))).json.request_id)).toMatchObject({ type: 'sample' });
  });

  it('refuses new work (429) while RX_POLICY_MAX_UNFETCHED_RESULTS wait to be fetched; fetching makes room', async () => {
    const server = await harness.serve(new InMemoryPolicyBackend(), { maxUnfetchedResults: 2 });
    const { modelId } = await newModel(server); // its create_model result was fetched
    const first = await api(server, 'forward_backward', fbBody(modelId, 1));
    const second = await api(server, 'forward_backward', fbBody(modelId, 2));
    expect([first.status, second.status]).toEqual([200, 200]);
    const third = await api(server, 'forward_backward', fbBody(modelId, 3));
    expect(third).toMatchObject({ status: 429, json: { error: expect.stringContaining('2 results wait to be fetched; this server holds at most 2 (RX_POLICY_MAX_UNFETCHED_RESULTS)') } });
    await futureResult(server, first.json.request_id);
    // fetching the same result again (a lost answer) still works and frees nothing twice
    await futureResult(server, first.json.request_id);
    expect((await api(server, 'forward_backward', fbBody(modelId, 3))).status).toBe(200);
    expect((await api(server, 'forward_backward', fbBody(modelId, 4))).status).toBe(429);
  });

  it('refuses new work (429) while RX_POLICY_MAX_UNFETCHED_RESULT_BYTES of results wait to be fetched', async () => {
    const server = await harness.serve(new InMemoryPolicyBackend(), { maxUnfetchedResultBytes: 100 });
    const { modelId } = await newModel(server);
    const first = await api(server, 'forward_backward', fbBody(modelId, 1, new Array(40).fill(3)));
    expect(first.status).toBe(200);
    // wait until it has finished, without fetching it
    const futures = server.app.get(PolicyServerContext).futures;
    while (futures.unfetched().bytes === 0) await new Promise((r) => setTimeout(r, 10));
    expect(futures.unfetched()).toEqual({ results: 1, bytes: expect.any(Number) });
    expect(futures.unfetched().bytes).toBeGreaterThan(100);
    const refused = await api(server, 'forward_backward', fbBody(modelId, 2));
    expect(refused).toMatchObject({ status: 429, json: { error: expect.stringMatching(/^\d+ bytes of results wait to be fetched; this server holds at most 100 \(RX_POLICY_MAX_UNFETCHED_RESULT_BYTES\)/) } });
    await futureResult(server, first.json.request_id);
    expect(futures.unfetched()).toEqual({ results: 0, bytes: 0 });
    const next = await api(server, 'forward_backward', fbBody(modelId, 2));
    expect((await futureResult(server, next.json.request_id)).loss_fn_output_type).toBe('importance_sampling');
  });

  it('answers 408 and closes a connection whose headers or body do not arrive in time', async () => {
    const server = await harness.serve(new InMemoryPolicyBackend(), { headersTimeoutMs: 300, requestTimeoutMs: 600 });
    const slowHeaders = openSocket(server, 'POST /api/v1/create_session HTTP/1.1\r\nHost: x\r\n');
    const slowBody = openSocket(server, 'POST /api/v1/create_session HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"sdk');
    const [headers, body] = await Promise.all([slowHeaders.closed, slowBody.closed]);
    expect(headers.data).toMatch(/^HTTP\/1\.1 408/);
    expect(headers.ms).toBeLessThan(3000);
    expect(body.data).toMatch(/^HTTP\/1\.1 408/);
    expect(body.ms).toBeGreaterThanOrEqual(550);
    expect(body.ms).toBeLessThan(3000);
  });

  it('closes connections beyond RX_POLICY_MAX_CONNECTIONS at once, and serves again when they go', async () => {
    const server = await harness.serve(new InMemoryPolicyBackend(), { maxConnections: 2 });
    const held = [openSocket(server, ''), openSocket(server, '')];
    await new Promise((r) => setTimeout(r, 100));
    const extra = openSocket(server, 'GET /health HTTP/1.1\r\nHost: x\r\n\r\n');
    const refused = await extra.closed;
    expect(refused.data).toBe('');
    for (const h of held) h.socket.destroy();
    await Promise.all(held.map((h) => h.closed));
    const ok = openSocket(server, 'GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');
    expect((await ok.closed).data).toMatch(/^HTTP\/1\.1 200/);
  });
});
