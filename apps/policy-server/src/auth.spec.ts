// The API key over real HTTP: every registered route, spelled every way Express might still route it (case,
// percent-encoding, trailing and double slashes, dot segments, a query) and with every method, answers 401 without
// the key and with a wrong one, and nothing runs; only GET/HEAD /health, /health/live, /health/ready and
// /api/v1/healthz answer without it.
// Request ids are random; a 409 names nothing but what the caller sent.
import { ExecutionContext, HttpException } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { datumToWire } from '@rx/backend';
import { InMemoryPolicyBackend } from '@rx/backend/testing';
import { ApiKeyGuard, Public, carriesKey, isPublicRequest } from './auth';
import { policyServerConfig } from './config';
import { api, futureResult, newModel, policyServerHarness, rawRequest, registeredRoutes } from './testing/policy-server.harness';

const KEY = 'test-key-0123456789abcdef';
const harness = policyServerHarness();
afterEach(() => harness.close());

const METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'];

/** Ways to write `path` that a router might still take for it. */
function spellings(path: string): string[] {
  const segments = path.split('/').filter(Boolean);
  const last = segments[segments.length - 1];
  const encodedFirst = (s: string): string => `%${s.charCodeAt(0).toString(16).toUpperCase()}${s.slice(1)}`;
  const join = (parts: string[]): string => `/${parts.join('/')}`;
  return [
    path,
    path.toUpperCase(),
    join(segments.map((s) => s[0].toUpperCase() + s.slice(1))),
    join(segments.map((s, i) => (i === 0 ? s.toUpperCase() : s))),
    `${path}/`,
    `${path}//`,
    `/${path}`,
    path.replace(/\/([^/]*)$/, '//$1'),
    join([...segments.slice(0, -1), encodedFirst(last)]),
    join(segments.map(encodedFirst)),
    join(segments).replace(/\//g, '%2F').replace(/^%2F/, '/'),
    join([...segments.slice(0, -1), '.', last]),
    join([...segments.slice(0, -1), 'x', '..', last]),
    `${path}?x=1`,
    `${path};x=1`,
    `${path}%20`,
    `${path}.json`,
  ];
}

describe('policy server authentication', () => {
  jest.setTimeout(60_000);

  it('answers 401 to every spelling and method of every route without the key or with a wrong one, and runs nothing', async () => {
    const backend = new InMemoryPolicyBackend();
    const server = await harness.serve(backend, { apiKey: KEY });
    const routes = registeredRoutes(server);
    // the table covers what the server serves, whatever routes it has today
    expect(routes.map((r) => `${r.method} ${r.path}`)).toEqual(
      expect.arrayContaining(['POST /api/v1/create_model', 'POST /api/v1/optim_step', 'POST /api/v1/retrieve_future', 'POST /api/v1/unload_model', 'GET /api/v1/samplers/x', 'GET /metrics', 'GET /health', 'GET /health/live', 'GET /health/ready']),
    );
    // a query string does not change the route
    const isPublic = (method: string, path: string): boolean => (method === 'GET' || method === 'HEAD') && ['/health', '/health/live', '/health/ready', '/api/v1/healthz'].includes(path.split('?')[0]);
    const answered: string[] = [];
    let tried = 0;
    for (const route of routes) {
      for (const path of spellings(route.path)) {
        for (const method of METHODS) {
          if (isPublic(method, path)) continue;
          // near misses of the key on the exact spelling; no key and a wrong one on every spelling
          const nearMisses = path === route.path ? [{ 'x-api-key': KEY.toUpperCase() }, { 'x-api-key': KEY.slice(0, -1) }, { 'x-api-key': `${KEY}0` }, { authorization: `Bearer ${KEY}0` }] : [];
          for (const headers of [{}, { 'x-api-key': 'wrong-key-0123456789abcdef' }, ...nearMisses]) {
            tried++;
            const res = await rawRequest(server, method, path, method === 'GET' || method === 'HEAD' ? undefined : { session_id: 'x', model_id: 'x', request_id: 'req_0' }, headers);
            if (res.status !== 401) answered.push(`${method} ${path} ${JSON.stringify(headers)} -> ${res.status}`);
          }
        }
      }
    }
    expect(tried).toBeGreaterThan(routes.length * 200);
    expect(answered).toEqual([]);
    expect(Object.values(backend.calls).reduce((a, b) => a + b, 0)).toBe(0);
  });

  it('serves only the liveness routes without the key, and everything with it (X-API-Key or Bearer)', async () => {
    const server = await harness.serve(new InMemoryPolicyBackend(), { apiKey: KEY });
    expect((await rawRequest(server, 'GET', '/health')).status).toBe(200);
    expect((await rawRequest(server, 'HEAD', '/health')).status).toBe(200);
    // the probes Kubernetes sends (k8s/overlays/embedded/policy-server.yaml): no key there either
    expect(await rawRequest(server, 'GET', '/health/live')).toMatchObject({ status: 200, json: { status: 'ok' } });
    expect(await rawRequest(server, 'GET', '/health/ready')).toMatchObject({ status: 200, json: { status: 'ok', info: { backend: { status: 'up' } } } });
    expect(await rawRequest(server, 'GET', '/api/v1/healthz')).toMatchObject({ status: 200, json: { status: 'ok' } });
    expect(await rawRequest(server, 'GET', '/metrics')).toMatchObject({ status: 401, json: { error: 'missing or wrong X-API-Key' } });
    const metrics = await rawRequest(server, 'GET', '/metrics', undefined, { authorization: `Bearer ${KEY}` });
    expect([metrics.status, metrics.body]).toEqual([200, expect.stringContaining('rx_policy_server_requests_total')]);
    const { modelId } = await newModel(server, KEY);
    expect(modelId).toMatch(/^[0-9a-f-]{36}:train:0$/);
    // the same request without the key changes nothing
    const datum = datumToWire({ inputTokens: [1, 2], targetTokens: [2, 3], samplingLogprobs: [0, -1], advantages: [0, 1] });
    const fb = { model_id: modelId, seq_id: 1, forward_backward_input: { data: [datum], loss_fn: 'importance_sampling' } };
    expect((await api(server, 'forward_backward', fb)).status).toBe(401);
    expect((await api(server, 'unload_model', { model_id: modelId })).status).toBe(401);
    const accepted = await api(server, 'forward_backward', fb, KEY);
    expect(accepted.status).toBe(200);
    expect(await futureResult(server, accepted.json.request_id, KEY)).toMatchObject({ loss_fn_output_type: 'importance_sampling' });
  });

  it('issues request ids that do not follow from one another, and 404s the old sequential ones', async () => {
    const server = await harness.serve(new InMemoryPolicyBackend(), { apiKey: KEY });
    const { sessionId } = await newModel(server, KEY);
    const ids: string[] = [];
    for (let seq = 1; seq <= 5; seq++) {
      const created = await api(server, 'create_model', { session_id: sessionId, model_seq_id: seq, base_model: 'rx-test/bigram', lora_config: { rank: 2 } }, KEY);
      ids.push(created.json.request_id as string);
    }
    expect(ids.every((id) => /^req_[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/.test(id))).toBe(true);
    expect(new Set(ids).size).toBe(ids.length);
    for (const guess of ['req_0', 'req_1', 'req_5']) {
      expect((await api(server, 'retrieve_future', { request_id: guess }, KEY)).status).toBe(404);
    }
    for (const id of ids) expect((await futureResult(server, id, KEY)).type).toBe('create_model');
  });

  it("answers a reused seq_id with 409 that names only the caller's own seq_id", async () => {
    const server = await harness.serve(new InMemoryPolicyBackend(), { apiKey: KEY });
    const { modelId } = await newModel(server, KEY);
    const adam = { learning_rate: 0.01, beta1: 0.9, beta2: 0.95, eps: 1e-8 };
    for (let seq = 1; seq <= 3; seq++) await futureResult(server, (await api(server, 'optim_step', { model_id: modelId, seq_id: seq, adam_params: adam }, KEY)).json.request_id, KEY);
    // another body under a used seq_id (the same body would be a resend and get its first future)
    const reuse = await api(server, 'optim_step', { model_id: modelId, seq_id: 1, adam_params: { ...adam, learning_rate: adam.learning_rate * 2 } }, KEY);
    expect(reuse).toMatchObject({ status: 409, json: { error: 'optim_step: seq_id 1 was already used' } });
    expect(reuse.body).not.toMatch(/[2-9]/);
  });
});

describe('the key check itself', () => {
  const req = (headers: Record<string, string | string[]>) => ({ headers });

  it('takes X-API-Key or a Bearer token, compares the whole key, and accepts all when no key is set', () => {
    expect(carriesKey(req({ 'x-api-key': KEY }), KEY)).toBe(true);
    expect(carriesKey(req({ authorization: `Bearer ${KEY}` }), KEY)).toBe(true);
    for (const wrong of [KEY.slice(1), `${KEY}0`, KEY.toUpperCase(), '', ' ']) expect(carriesKey(req({ 'x-api-key': wrong }), KEY)).toBe(false);
    expect(carriesKey(req({ 'x-api-key': [KEY, KEY] }), KEY)).toBe(false);
    expect(carriesKey(req({ authorization: `Basic ${KEY}` }), KEY)).toBe(false);
    expect(carriesKey(req({}), KEY)).toBe(false);
    expect(carriesKey(req({}), undefined)).toBe(true);
  });

  it('treats as public only GET/HEAD of the liveness paths spelled exactly', () => {
    expect(isPublicRequest({ method: 'GET', originalUrl: '/health', url: '/health' })).toBe(true);
    expect(isPublicRequest({ method: 'HEAD', originalUrl: '/api/v1/healthz?x=1', url: '/api/v1/healthz?x=1' })).toBe(true);
    expect(isPublicRequest({ method: 'GET', originalUrl: '/health/live', url: '/health/live' })).toBe(true);
    expect(isPublicRequest({ method: 'GET', originalUrl: '/health/ready', url: '/health/ready' })).toBe(true);
    const misses = [['POST', '/health'], ['GET', '/Health'], ['GET', '/health/'], ['GET', '//health'], ['GET', '/%68ealth'], ['GET', '/metrics'], ['GET', '/api/v1/healthz/../create_model']];
    misses.push(['POST', '/health/ready'], ['GET', '/health/live/'], ['GET', '/health/Ready'], ['GET', '/health/ready/../../metrics'], ['GET', '/health/metrics']);
    for (const [method, path] of misses) {
      expect({ method, path, public: isPublicRequest({ method, originalUrl: path, url: path }) }).toEqual({ method, path, public: false });
    }
  });

  it('guards every handler not marked @Public(), whatever reached it', () => {
    class Handlers {
      @Public()
      open(): void {}
      closed(): void {}
    }
    const guard = new ApiKeyGuard(new Reflector(), policyServerConfig({ apiKey: KEY }));
    const context = (handler: () => void, headers: Record<string, string>): ExecutionContext =>
      ({ getHandler: () => handler, getClass: () => Handlers, switchToHttp: () => ({ getRequest: () => ({ headers }) }) }) as unknown as ExecutionContext;
    expect(guard.canActivate(context(Handlers.prototype.open, {}))).toBe(true);
    expect(guard.canActivate(context(Handlers.prototype.closed, { 'x-api-key': KEY }))).toBe(true);
    expect(() => guard.canActivate(context(Handlers.prototype.closed, {}))).toThrow(HttpException);
    const refused = (() => {
      try {
        guard.canActivate(context(Handlers.prototype.closed, { 'x-api-key': 'nope' }));
      } catch (e) {
        return e as HttpException;
      }
      return undefined;
    })();
    expect([refused?.getStatus(), refused?.getResponse()]).toEqual([401, { error: 'missing or wrong X-API-Key' }]);
  });
});
