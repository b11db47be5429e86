// A session loss met by several calls in flight at once: the first 404 forgets the session, the next client opens
// a new one, and a late 404 of a call sent before the loss leaves that new session alone (it once ended it, so the
// controller's restarted preflight kept meeting "the session this client was made in is gone"). The HTTP layer is a
// stand-in whose answers the test releases one by one.
import { DEFAULT_TINKER_TIMING, TinkerCore } from './tinker-core';
import { TinkerApiError, TinkerSessionLostError } from './tinker-errors';
import type { TinkerHttp, TinkerHttpRequest, TinkerHttpResponse } from './tinker-http';

function stubHttp() {
  let sessions = 0;
  const pending: Array<{ reject: (err: unknown) => void }> = [];
  const http = {
    closed: false,
    redact: (t: string) => t,
    sleep: async () => undefined,
    useCredential: () => undefined,
    close: () => undefined,
    request: (req: TinkerHttpRequest): Promise<TinkerHttpResponse> => {
      if (req.path.endsWith('/client/config')) return Promise.resolve({ status: 200, body: {}, contentType: 'application/json' });
      if (req.path.endsWith('/create_session')) return Promise.resolve({ status: 200, body: { session_id: `s${++sessions}` }, contentType: 'application/json' });
      return new Promise((_resolve, reject) => pending.push({ reject }));
    },
  };
  const lose = (i: number) => pending[i].reject(new TinkerApiError('POST /api/v1/optim_step', 404, '{}', 1, 'unknown model'));
  return { http: http as unknown as TinkerHttp, lose, sessions: () => sessions };
}

it('a late 404 of a call sent before the loss does not end the session opened since', async () => {
  const { http, lose, sessions } = stubHttp();
  const core = new TinkerCore(http, { pollTimeoutMs: 1000, futureTimeoutMs: 1000, heartbeatIntervalMs: 60_000, tags: [], logger: { warn: () => undefined }, timing: DEFAULT_TINKER_TIMING });
  await core.ensureSession();
  const call = () => core.request({ method: 'POST', path: '/api/v1/optim_step', body: {} });
  const a = call().catch((e: unknown) => e);
  const b = call().catch((e: unknown) => e);
  lose(0);
  expect(await a).toBeInstanceOf(TinkerSessionLostError);
  const renewed = await core.ensureSession();
  expect([renewed.sessionId, sessions()]).toEqual(['s2', 2]);
  const generation = core.sessionGeneration;
  lose(1);
  expect(await b).toBeInstanceOf(TinkerSessionLostError);
  await expect(core.sessionOf(generation, 'asample')).resolves.toBe(renewed);
  // a 404 of the session now in use still forgets it
  const c = call().catch((e: unknown) => e);
  lose(2);
  expect(await c).toBeInstanceOf(TinkerSessionLostError);
  await expect(core.sessionOf(generation, 'asample')).rejects.toBeInstanceOf(TinkerSessionLostError);
  core.close();
});
