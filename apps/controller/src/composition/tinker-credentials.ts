// Tinker's key and base URL: present (checked before anything is written), accepted by the service (one
// authenticated call before a new run's directory is written), and the service serves the spec's base model at its
// LoRA rank (get_server_capabilities, as the SDK asks it). Each refusal is one line, exit 2, nothing written.
import { TINKER_WIRE_SDK_VERSION, TinkerApiError, TinkerHttp, capabilityProblem, getServerCapabilitiesResponseSchema, type RequestedModel } from '@rx/backend';
import type { ControllerConfig } from '../config';
import { redactUrl } from '../config';
import { RunUserError } from './run-options';

/** Tinker needs its key and a base URL; checked before any work. */
export function tinkerCredentials(config: ControllerConfig): { apiKey: string; baseUrl: string } {
  const baseUrl = config.TINKER_BASE_URL ?? config.RX_BACKEND_URL;
  const missing = [config.TINKER_API_KEY ? null : 'TINKER_API_KEY', baseUrl ? null : 'TINKER_BASE_URL'].filter((x): x is string => x !== null);
  if (missing.length > 0) {
    throw new RunUserError(`--backend tinker needs ${missing.join(' and ')}: export TINKER_API_KEY=<your key> and TINKER_BASE_URL=<the Tinker service URL> (nothing was started)`);
  }
  return { apiKey: config.TINKER_API_KEY as string, baseUrl: baseUrl as string };
}

/**
 * One authenticated call (client/config, as the Tinker SDK opens a session) with the key and URL the run would use:
 * a refused key, a URL that does not answer or is not a Tinker service is one line naming the variable (exit 2).
 */
export async function checkTinkerCredentials(creds: { apiKey: string; baseUrl: string }, want?: RequestedModel): Promise<void> {
  const origin = redactUrl(creds.baseUrl);
  const http = new TinkerHttp({ baseUrl: creds.baseUrl, apiKey: creds.apiKey, timeoutMs: 15_000, retry: { retries: 0, baseDelayMs: 0, maxDelayMs: 0 }, userAgent: 'rx-credential-check' });
  try {
    await http.request({ method: 'POST', path: '/api/v1/client/config', body: { sdk_version: TINKER_WIRE_SDK_VERSION }, retries: 0 });
    if (want) await checkServedModel(http, origin, want);
  } catch (err) {
    if (err instanceof RunUserError) throw err;
    if (err instanceof TinkerApiError && (err.status === 401 || err.status === 403)) {
      throw new RunUserError(`TINKER_API_KEY was refused by ${origin} (HTTP ${err.status}): export the key of your Tinker account (nothing was written)`);
    }
    if (err instanceof TinkerApiError) throw new RunUserError(`TINKER_BASE_URL ${origin} answered HTTP ${err.status} to client/config: is it the Tinker service's URL? (nothing was written)`);
    throw new RunUserError(`TINKER_BASE_URL ${origin} did not answer (${err instanceof Error ? err.message.split('\n')[0] : String(err)}): check the URL and the network (nothing was written)`);
  } finally {
    http.close();
  }
}

/** The largest wait for get_server_capabilities: the check must answer in seconds. */
const CAPABILITIES_TIMEOUT_MS = 4_000;

/**
 * GET get_server_capabilities: the spec's base model must be among the served models (and its rank within the
 * largest the service announces, where it does). A service without the route (HTTP 404) is told in no line here:
 * create_model then refuses an unserved model at the start of the run.
 */
async function checkServedModel(http: TinkerHttp, origin: string, want: RequestedModel): Promise<void> {
  let body: unknown;
  try {
    body = (await http.request({ method: 'GET', path: '/api/v1/get_server_capabilities', retries: 0, timeoutMs: CAPABILITIES_TIMEOUT_MS })).body;
  } catch (err) {
    if (err instanceof TinkerApiError && err.status === 404) return;
    throw err;
  }
  const caps = getServerCapabilitiesResponseSchema.safeParse(body);
  if (!caps.success) throw new RunUserError(`TINKER_BASE_URL ${origin} answered get_server_capabilities with an unexpected body: is it the Tinker service's URL? (nothing was written)`);
  const problem = capabilityProblem(caps.data, want, origin);
  if (problem) throw new RunUserError(`${problem}: choose a served base_model in the spec, or another TINKER_BASE_URL (nothing was written)`);
}
