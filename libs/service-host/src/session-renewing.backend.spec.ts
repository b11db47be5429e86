import { TinkerApiError, TinkerSessionLostError, type PolicyBackend, type TrainingClient } from '@rx/backend';
import { HashChainPolicyBackend } from '@rx/backend/testing';
import { isSessionLost, sessionRenewingBackend } from './session-renewing.backend';

// what the Tinker client raises on a 404 from a call naming its session, model or sampler, whatever the wording
const lost = () => new TinkerSessionLostError('POST /api/v1/create_model', 404, '{"error":"session expired"}', 1, 'the server no longer knows this session');

/** a backend whose session the server forgets after `healthyCalls` calls (a restarted policy server) */
function forgetful(healthyCalls: number, made: Array<{ closed: boolean }>): () => PolicyBackend {
  return () => {
    const inner = new HashChainPolicyBackend();
    const state = { closed: false, calls: 0 };
    made.push(state);
    const guard = <T>(f: () => Promise<T>): Promise<T> => (state.calls++ >= healthyCalls && made.length === 1 ? Promise.reject(lost()) : f());
    return {
      kind: inner.kind,
      createLoraTrainingClient: (c) =>
        guard(async () => {
          const t = await inner.createLoraTrainingClient(c);
          return { ...t, modelId: t.modelId, forwardBackward: (d, l) => guard(() => t.forwardBackward(d, l)), optimStep: (p) => t.optimStep(p), saveWeightsForSampler: (n) => guard(() => t.saveWeightsForSampler(n)), saveState: (n) => t.saveState(n), loadState: (p) => t.loadState(p) } as TrainingClient;
        }),
      createSamplingClient: (p) => guard(() => inner.createSamplingClient(p)),
      ping: () => inner.ping(),
      close: async () => {
        state.closed = true;
      },
    };
  };
}

describe('sessionRenewingBackend', () => {
  it('recognises the server forgetting the session (by the client\'s classification, not the text), and nothing else', () => {
    expect(isSessionLost(lost())).toBe(true);
    // a 404 the client did not classify (e.g. a REST lookup) is not a lost session, whatever it says
    expect(isSessionLost(new TinkerApiError('GET /api/v1/samplers/x', 404, '{"error":"unknown session_id"}', 1, 'unknown session_id'))).toBe(false);
    expect(isSessionLost(new TinkerApiError('create_model', 500, 'unknown session_id', 1, 'x'))).toBe(false);
    expect(isSessionLost(new Error('unknown session_id'))).toBe(false);
  });

  it('creates clients on a new session once the server forgot the old one (retried once), and closes the old one', async () => {
    const made: Array<{ closed: boolean }> = [];
    const backend = sessionRenewingBackend(forgetful(1, made));
    await backend.createLoraTrainingClient({ baseModel: 'rx/char-lm', rank: 1, seed: 0 });
    const again = await backend.createLoraTrainingClient({ baseModel: 'rx/char-lm', rank: 1, seed: 0 });
    expect(again.modelId).toMatch(/^hash-chain-/);
    expect(backend.renewals).toBe(1);
    expect(made.map((m) => m.closed)).toEqual([true, false]);
    await backend.close();
    expect(made[1].closed).toBe(true);
  });

  it('a client call that hits the lost session still fails (its job retries), and renews for the next call', async () => {
    const made: Array<{ closed: boolean }> = [];
    const backend = sessionRenewingBackend(forgetful(2, made));
    const client = await backend.createLoraTrainingClient({ baseModel: 'rx/char-lm', rank: 1, seed: 0 });
    await client.saveWeightsForSampler('a');
    await expect(client.saveWeightsForSampler('b')).rejects.toBeInstanceOf(TinkerApiError);
    expect(backend.renewals).toBe(1);
    const fresh = await backend.createLoraTrainingClient({ baseModel: 'rx/char-lm', rank: 1, seed: 0 });
    await expect(fresh.saveWeightsForSampler('c')).resolves.toMatch(/^memory:\/\/hash-chain\//);
    expect(backend.renewals).toBe(1);
    await backend.close();
  });

  it('passes any other error through without renewing', async () => {
    const backend = sessionRenewingBackend(() => ({ ...new HashChainPolicyBackend(), kind: 'embedded', createLoraTrainingClient: () => Promise.reject(new Error('rank too large')), createSamplingClient: () => Promise.reject(new Error('no')), ping: async () => true, close: async () => undefined }));
    await expect(backend.createLoraTrainingClient({ baseModel: 'x', rank: 1, seed: 0 })).rejects.toThrow('rank too large');
    expect(backend.renewals).toBe(0);
  });
});
