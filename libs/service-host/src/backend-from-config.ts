// The PolicyBackend a service talks to, from RX_BACKEND_URL: the policy server (the embedded model behind the
// Tinker wire protocol) or Tinker itself, both through libs/backend's TinkerBackend; or, for tests and local
// smoke runs only, memory://hash-chain: the deterministic HashChainPolicyBackend test double in the process
// (its weights travel between services inside the sampler path, so four processes still make one pipeline).
// Over HTTP the client renews its session when the server forgot it (a restarted policy server).
import { TinkerBackend, type PolicyBackend, HashChainPolicyBackend } from '@rx/backend';
import { sessionRenewingBackend } from './session-renewing.backend';
import { ConfigError } from './service-config';

/** sent when TINKER_API_KEY is unset: a policy server without RX_POLICY_API_KEY accepts any key */
export const NO_API_KEY = 'rx-no-key';

/** RX_BACKEND_URL of the in-process test double (never a real run) */
export const HASH_CHAIN_BACKEND_URL = 'memory://hash-chain';

export function backendFromConfig(config: { RX_BACKEND_URL: string; TINKER_API_KEY?: string; RX_TINKER_STUCK_TIMEOUT_MS?: number }): PolicyBackend {
  if (config.RX_BACKEND_URL === HASH_CHAIN_BACKEND_URL) return new HashChainPolicyBackend();
  if (!/^https?:\/\//.test(config.RX_BACKEND_URL)) {
    throw new ConfigError(
      `RX_BACKEND_URL must be the http(s) URL of a policy server or of Tinker, or ${HASH_CHAIN_BACKEND_URL} for tests (got '${config.RX_BACKEND_URL}')`,
    );
  }
  const { RX_BACKEND_URL: baseUrl, TINKER_API_KEY: apiKey, RX_TINKER_STUCK_TIMEOUT_MS: stuckTimeoutMs } = config;
  const timing = stuckTimeoutMs === undefined ? {} : { stuckTimeoutMs };
  return sessionRenewingBackend(() => new TinkerBackend({ baseUrl, apiKey: apiKey ?? NO_API_KEY, timing }));
}
