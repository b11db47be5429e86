// A PolicyBackend that starts over with a new backend client when the server has forgotten the old one's
// session (a restarted policy server, an expired Tinker session: the Tinker client raises
// TinkerSessionLostError, told by status and endpoint, not by the server's wording). Without it a
// service would keep its dead session until it is restarted itself. The call that hit the lost session still
// fails (its job retries after the back-off); creating a client is retried once on the new session. Training
// clients of the old session are gone with it: the trainer's pool discards them on their first failure.
import { TinkerSessionLostError, type PolicyBackend, type SampleParams, type SamplingClient, type TrainingClient } from '@rx/backend';

/** The server no longer knows the client's session (or a model or sampler of it). */
export function isSessionLost(err: unknown): boolean {
  return err instanceof TinkerSessionLostError;
}

export interface SessionRenewingBackend extends PolicyBackend {
  /** how many times the backend client was replaced */
  readonly renewals: number;
}

export function sessionRenewingBackend(create: () => PolicyBackend, lost: (err: unknown) => boolean = isSessionLost): SessionRenewingBackend {
  let current = create();
  let renewals = 0;
  let closed = false;

  const renew = (seen: PolicyBackend): void => {
    if (closed || current !== seen) return; // another call renewed it already
    renewals++;
    const old = current;
    current = create();
    void old.close().catch(() => undefined);
  };

  const guard = async <T>(seen: PolicyBackend, call: () => Promise<T>): Promise<T> => {
    try {
      return await call();
    } catch (err) {
      if (lost(err)) renew(seen);
      throw err;
    }
  };

  const creating = async <T>(make: (b: PolicyBackend) => Promise<T>): Promise<T> => {
    const seen = current;
    try {
      return await make(seen);
    } catch (err) {
      if (!lost(err)) throw err;
      renew(seen);
      return make(current);
    }
  };

  const training = (b: PolicyBackend, c: TrainingClient): TrainingClient => ({
    get modelId() {
      return c.modelId;
    },
    forwardBackward: (datums, lossFn) => guard(b, () => c.forwardBackward(datums, lossFn)),
    optimStep: (params) => guard(b, () => c.optimStep(params)),
    saveWeightsForSampler: (name, options) => guard(b, () => c.saveWeightsForSampler(name, options)),
    saveState: (name, options) => guard(b, () => c.saveState(name, options)),
    loadState: (path) => guard(b, () => c.loadState(path)),
  });
  const sampling = (b: PolicyBackend, c: SamplingClient): SamplingClient => ({
    get modelPath() {
      return c.modelPath;
    },
    sample: (tokens, n, params) => guard(b, () => c.sample(tokens, n, params)),
    computeLogprobs: (tokens) => guard(b, () => c.computeLogprobs(tokens)),
    ...(c.sampleWithPromptLogprobs ? { sampleWithPromptLogprobs: (tokens: number[], n: number, params: SampleParams) => guard(b, () => c.sampleWithPromptLogprobs!(tokens, n, params)) } : {}),
  });

  return {
    get kind() {
      return current.kind;
    },
    get renewals() {
      return renewals;
    },
    createLoraTrainingClient: (config) => creating(async (b) => training(b, await b.createLoraTrainingClient(config))),
    createSamplingClient: (path) => creating(async (b) => sampling(b, await b.createSamplingClient(path))),
    ping: () => current.ping(),
    close: async () => {
      closed = true;
      await current.close();
    },
  };
}
