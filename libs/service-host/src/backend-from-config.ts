// The PolicyBackend a service talks to, from RX_BACKEND_URL: the policy server (the embedded model behind the
// Tinker wire protocol) or Tinker itself, both through libs/backend's TinkerBackend. The client renews its session
// when the server forgot it (a restarted policy server). Tests that want a test double in the service start it
// through the app's own test entry point (apps/<service>/testing/hash-chain.main.ts), never through this URL.
import { TinkerBackend, type PolicyBackend } from '@rx/backend';
import { sessionRenewingBackend } from './session-renewing.backend';
import { ConfigError } from './service-config';

/** sent when TINKER_API_KEY is unset: a policy server without RX_POLICY_API_KEY accepts any key */
export const NO_API_KEY = 'rx-no-key';

export function backendFromConfig(config: { RX_BACKEND_URL: string; TINKER_API_KEY?: string; RX_TINKER_STUCK_TIMEOUT_MS?: number }): PolicyBackend {
  if (!/^https?:\/\//.test(config.RX_BACKEND_URL)) {
    throw new ConfigError(`RX_BACKEND_URL must be the http(s) URL of a policy server or of Tinker (got '${config.RX_BACKEND_URL}')`);
  }
  const { RX_BACKEND_URL: baseUrl, TINKER_API_KEY: apiKey, RX_TINKER_STUCK_TIMEOUT_MS: stuckTimeoutMs } = config;
  const timing = stuckTimeoutMs === undefined ? {} : { stuckTimeoutMs };
  return sessionRenewingBackend(() => new TinkerBackend({ baseUrl, apiKey: apiKey ?? NO_API_KEY, timing }));
}
