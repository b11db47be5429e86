// Fuzz: request bodies of the policy server (apps/policy-server) over real HTTP on 127.0.0.1, with the
// in-memory test backend. Mutations of a valid body for each endpoint, random JSON, damaged JSON text, bodies
// over the size limit and requests over the token limit: every answer comes back in time, is JSON, and is either
// a success or a 4xx `{ "error": "…" }` (never a 5xx for a bad body); afterwards the server still serves.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import fc from 'fast-check';
import { datumToWire } from '@rx/backend';
import { InMemoryPolicyBackend } from '@rx/backend/testing';
import { policyServerConfig, startPolicyServer, type PolicyServer } from '@rx/policy-server';
import { mapLimit } from './cli-harness';
import { fuzzParams, fuzzRuns, fuzzTimeoutMs, SAMPLE_SEED } from './fuzz-config';
import { damagedJsonText, mutatedJson, type Json } from './json-mutation';

/** An answer slower than this is a hang (the long-poll is set to 20 ms; the slowest request is a few ms). */
const ANSWER_MS = 5000;
const MAX_BODY_BYTES = 256 * 1024;
const MAX_TOKENS = 4096;

interface Answer {
  status: number;
  contentType: string;
  text: string;
  body: unknown;
}

let server: PolicyServer;
let dataDir: string;
const unhandled: unknown[] = [];
const onUnhandled = (reason: unknown): void => {
  unhandled.push(reason);
};

async function post(endpoint: string, body: string, headers: Record<string, string> = {}): Promise<Answer> {
  const res = await fetch(`${server.url}/api/v1/${endpoint}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body,
    signal: AbortSignal.timeout(ANSWER_MS),
  });
  const text = await res.text();
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    parsed = undefined;
  }
  return { status: res.status, contentType: res.headers.get('content-type') ?? '', text, body: parsed };
}

const call = async (endpoint: string, body: Json): Promise<Record<string, unknown>> => {
  const a = await post(endpoint, JSON.stringify(body));
  if (a.status !== 200) throw new Error(`setup: ${endpoint} answered ${a.status} ${a.text}`);
  return a.body as Record<string, unknown>;
};

async function result(requestId: unknown): Promise<Record<string, unknown>> {
  for (let i = 0; i < 200; i++) {
    const r = await call('retrieve_future', { request_id: requestId as string });
    if (r.type !== 'try_again') return r;
  }
  throw new Error(`setup: ${String(requestId)} never finished`);
}

/** What every answer to a fuzzed body must be: JSON, and a success or a 4xx with one error message. */
function badAnswer(a: Answer): string | null {
  if (a.status >= 500) return `status ${a.status}: ${a.text.slice(0, 300)}`;
  if (!a.contentType.includes('application/json') || a.body === undefined) return `status ${a.status}, not JSON: ${a.contentType} ${a.text.slice(0, 200)}`;
  if (a.status >= 400) {
    const b = a.body as { error?: unknown };
    if (typeof b !== 'object' || b === null || typeof b.error !== 'string' || b.error.trim() === '') return `status ${a.status} without an error message: ${a.text.slice(0, 200)}`;
    if (/\n\s+at /.test(b.error)) return `a stack trace in the error: ${b.error.slice(0, 300)}`;
  } else if (a.status !== 200) return `status ${a.status}`;
  return null;
}

/** Valid bodies of every POST endpoint, built over a live session, model and sampler. */
let valid: Record<string, Json>;

beforeAll(async () => {
  process.on('unhandledRejection', onUnhandled);
  dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'rx-fuzz-policy-'));
  server = await startPolicyServer(
    policyServerConfig({ host: '127.0.0.1', port: 0, dataDir, longPollMs: 20, maxBodyBytes: MAX_BODY_BYTES, maxTokensPerRequest: MAX_TOKENS, shutdownGraceMs: 100 }),
    new InMemoryPolicyBackend(),
    { logger: false },
  );
  const { session_id: sessionId } = await call('create_session', { sdk_version: '0.24.1', tags: [] });
  const created = await call('create_model', { session_id: sessionId as string, model_seq_id: 0, base_model: 'rx-test/bigram', lora_config: { rank: 2, seed: 1 } });
  const modelId = (await result(created.request_id)).model_id as string;
  const saved = await call('save_weights', { model_id: modelId, seq_id: 1, path: 'fuzz-state' });
  const statePath = (await result(saved.request_id)).path as string;
  const forSampler = await call('save_weights_for_sampler', { model_id: modelId, seq_id: 2, path: 'fuzz-weights' });
  const samplerPath = (await result(forSampler.request_id)).path as string;
  const spare = await call('create_model', { session_id: sessionId as string, model_seq_id: 1, base_model: 'rx-test/bigram', lora_config: { rank: 2, seed: 2 } });
  const spareModelId = (await result(spare.request_id)).model_id as string;
  const sampling = await call('create_sampling_session', { session_id: sessionId as string, sampling_session_seq_id: 0, model_path: samplerPath });
  const datum = datumToWire({ inputTokens: [1, 2, 3], targetTokens: [2, 3, 4], samplingLogprobs: [0, -2, -2], advantages: [0, 1, 1] }) as unknown as Json;
  const adam = { learning_rate: 0.01, beta1: 0.9, beta2: 0.95, eps: 1e-8 };
  valid = {
    'client/config': { sdk_version: '0.24.1' },
    'client/dynamic_config': {},
    create_session: { sdk_version: '0.24.1', tags: ['fuzz'], user_metadata: { who: 'fuzz' } },
    session_heartbeat: { session_id: sessionId as string },
    telemetry: { events: [] },
    create_model: { session_id: sessionId as string, model_seq_id: 7, base_model: 'rx-test/bigram', lora_config: { rank: 2, seed: 3 } },
    get_info: { model_id: modelId },
    forward_backward: { model_id: modelId, seq_id: 3, forward_backward_input: { data: [datum], loss_fn: 'importance_sampling' } },
    optim_step: { model_id: modelId, seq_id: 4, adam_params: adam },
    save_weights: { model_id: modelId, seq_id: 5, path: 'fuzz-state-2' },
    load_weights: { model_id: modelId, seq_id: 6, path: statePath, optimizer: true },
    save_weights_for_sampler: { model_id: modelId, seq_id: 7, path: 'fuzz-weights-2' },
    // a model of its own: the fuzz must not unload the one the other bodies use
    unload_model: { model_id: spareModelId },
    create_sampling_session: { session_id: sessionId as string, sampling_session_seq_id: 1, model_path: samplerPath },
    asample: {
      sampling_session_id: sampling.sampling_session_id as string,
      prompt: { chunks: [{ type: 'encoded_text', tokens: [1, 2, 3] }] },
      sampling_params: { max_tokens: 4, temperature: 1, stop: [0] },
      num_samples: 2,
    },
    retrieve_future: { request_id: created.request_id as string },
  };
});

afterAll(async () => {
  await server?.close();
  fs.rmSync(dataDir, { recursive: true, force: true });
  process.off('unhandledRejection', onUnhandled);
});

describe('policy server body fuzz', () => {
  it('the valid bodies are answered 200 (so the mutations start from accepted requests)', async () => {
    for (const [endpoint, body] of Object.entries(valid)) {
      const a = await post(endpoint, JSON.stringify(body));
      expect({ endpoint, status: a.status, bad: badAnswer(a) }).toEqual({ endpoint, status: 200, bad: null });
    }
  });

  it('mutated bodies of every endpoint: JSON answers, 2xx or 4xx, in time', async () => {
    const perEndpoint = fuzzRuns(0.03);
    const cases = Object.entries(valid).flatMap(([endpoint, body]) =>
      fc.sample(mutatedJson(body), { numRuns: perEndpoint, ...seedOf(endpoint) }).map((b) => ({ endpoint, text: JSON.stringify(b) })),
    );
    const answers = await mapLimit(cases, 4, (c) => post(c.endpoint, c.text));
    const bad = answers.map((a, i) => [cases[i], badAnswer(a)] as const).filter(([, why]) => why !== null);
    expect(bad.map(([c, why]) => `RX_FUZZ_SEED=${SAMPLE_SEED}: ${c.endpoint} ${c.text.slice(0, 200)} -> ${why}`)).toEqual([]);
    // most mutations break the schema: they must be refused, not run
    expect(answers.filter((a) => a.status >= 400 && a.status < 500).length).toBeGreaterThan(cases.length / 3);
  }, fuzzTimeoutMs(60_000));

  it('random JSON and damaged JSON text: 4xx JSON errors', async () => {
    const endpoints = Object.keys(valid).filter((e) => e !== 'telemetry' && e !== 'client/dynamic_config');
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...endpoints),
        fc.oneof(
          fc.jsonValue({ maxDepth: 3 }).map((j) => JSON.stringify(j)),
          fc.constantFrom('', '{', '{"a":', 'null', '[]', '"x"', '{"__proto__": {"polluted": 1}}', '\uFEFF{}', '{"a": 1e999}', `${'['.repeat(5000)}${']'.repeat(5000)}`),
        ),
        async (endpoint, text) => {
          const a = await post(endpoint, text);
          expect(badAnswer(a)).toBeNull();
          // a body that is not even the right JSON shape is a client error
          if (!text.trim().startsWith('{') || text === '{"a": 1e999}') expect(a.status).toBeGreaterThanOrEqual(400);
        },
      ),
      fuzzParams(0.1),
    );
    const damaged = Object.entries(valid).flatMap(([endpoint, body]) => fc.sample(damagedJsonText(body), { numRuns: fuzzRuns(0.005), ...seedOf(endpoint) }).map((text) => ({ endpoint, text })));
    for (const c of damaged) {
      const a = await post(c.endpoint, c.text);
      expect({ ...c, seed: SAMPLE_SEED, bad: badAnswer(a) }).toEqual({ ...c, seed: SAMPLE_SEED, bad: null });
    }
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  }, fuzzTimeoutMs(60_000));

  it('a body over the size limit is 413 with a JSON error; a request over the token limit is 400', async () => {
    const big = JSON.stringify({ sdk_version: 'x'.repeat(MAX_BODY_BYTES + 1) });
    const a = await post('client/config', big);
    expect({ status: a.status, bad: badAnswer(a) }).toEqual({ status: 413, bad: null });
    const fb = valid.forward_backward as { forward_backward_input: { data: Array<Record<string, Json>> } };
    const n = MAX_TOKENS + 1;
    const tooMany = datumToWire({ inputTokens: Array(n).fill(1), targetTokens: Array(n).fill(2), samplingLogprobs: Array(n).fill(-1), advantages: Array(n).fill(0.5) });
    const over = await post('forward_backward', JSON.stringify({ ...fb, forward_backward_input: { ...fb.forward_backward_input, data: [tooMany] } }));
    expect({ status: over.status, bad: badAnswer(over) }).toEqual({ status: 400, bad: null });
    expect((over.body as { error: string }).error).toMatch(/RX_POLICY_MAX_TOKENS_PER_REQUEST/);
    const sample = valid.asample as Record<string, Json>;
    const overSample = await post('asample', JSON.stringify({ ...sample, num_samples: 1e6, sampling_params: { max_tokens: 1e6, temperature: 1 } }));
    expect({ status: overSample.status, bad: badAnswer(overSample) }).toEqual({ status: 400, bad: null });
  });

  // FIXED (was a BUG, now guarded): libs/backend/src/tinker/tinker-datum.ts:78 (tensorToDense, used by the policy server's forward_backward)
  // allocates `new Array(rows * cols)` from the request's own `shape` before checking it against the data, so a
  // 100-byte CSR tensor with shape [1, 4294967296] throws RangeError "Invalid array length", which the server
  // answers as 500 "internal server error" (and shape [1, 1e8] makes it allocate 800 MB for one request). Check
  // rows * cols against the token limit (and the dense data length) first and answer 400.
  it('a sparse tensor with a huge shape is refused with 400, not allocated', async () => {
    const fb = valid.forward_backward as { forward_backward_input: { data: Array<Record<string, Json>> } };
    const datum = fb.forward_backward_input.data[0] as { loss_fn_inputs: Record<string, Json> };
    const sparse = { data: [1], dtype: 'float32', shape: [1, 2 ** 32], sparse_crow_indices: [0, 1], sparse_col_indices: [0] };
    const body = { ...fb, forward_backward_input: { ...fb.forward_backward_input, data: [{ ...datum, loss_fn_inputs: { ...datum.loss_fn_inputs, advantages: sparse } }] } };
    const a = await post('forward_backward', JSON.stringify(body));
    expect({ status: a.status, bad: badAnswer(a) }).toEqual({ status: 400, bad: null });
  });

  it('stays up: health, a fresh session and metrics answer after the fuzz; no unhandled rejection', async () => {
    const health = await fetch(`${server.url}/health`, { signal: AbortSignal.timeout(ANSWER_MS) });
    expect(health.status).toBe(200);
    const s = await post('create_session', JSON.stringify({ sdk_version: '0.24.1' }));
    expect(s.status).toBe(200);
    const metrics = await fetch(`${server.url}/metrics`, { signal: AbortSignal.timeout(ANSWER_MS) });
    expect(metrics.status).toBe(200);
    expect(unhandled).toEqual([]);
  });
});

/** The fc.sample seed of one endpoint: RX_FUZZ_SEED or this run's seed, varied by endpoint. */
function seedOf(endpoint: string): { seed: number } {
  let h = SAMPLE_SEED;
  for (const ch of endpoint) h = (Math.imul(h, 31) + ch.charCodeAt(0)) | 0;
  return { seed: h };
}
