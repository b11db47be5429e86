// Configuration of the policy server, from the environment, validated once at boot with zod. A bad value
// gives one line naming the variable (the API key's value is never printed). The key is required whenever HOST
// is not a loopback address; the bounds on models, results and connections have defaults that fit the 2 GiB pod.
import { z } from 'zod';
import { parseHostedLike } from './hosted-like.config';

const emptyToUndefined = (v: unknown): unknown => (typeof v === 'string' && v.trim() === '' ? undefined : v);

function intVar(min: number, fallback: number, max = Number.MAX_SAFE_INTEGER) {
  return z.preprocess(
    emptyToUndefined,
    z
      .string()
      .regex(/^\d+$/, `must be an integer >= ${min}`)
      .transform(Number)
      .pipe(z.number().int().min(min, `must be an integer >= ${min}`).max(max, `must be at most ${max}`))
      .optional()
      .transform((v) => v ?? fallback),
  );
}

export const policyServerConfigSchema = z
  .object({
    /** interface to bind; 127.0.0.1 unless told otherwise */
    HOST: z.preprocess(emptyToUndefined, z.string().trim().min(1).default('127.0.0.1')),
    /** 0 picks a free port */
    PORT: intVar(0, 8000, 65535),
    /** where weights and states of the backend and the tinker:// path index live */
    RX_DATA_DIR: z.preprocess(emptyToUndefined, z.string().trim().min(1).default('runs/policy-server')),
    /** fixed extra latency added to every /api/v1 request (benchmarks) */
    RX_POLICY_LATENCY_MS: intVar(0, 0, 600_000),
    /** largest JSON body accepted (413 beyond) */
    RX_POLICY_MAX_BODY_BYTES: intVar(1, 16 * 1024 * 1024),
    /** most tokens one forward_backward or asample may carry (400 beyond) */
    RX_POLICY_MAX_TOKENS_PER_REQUEST: intVar(1, 262_144),
    /** how long retrieve_future holds a pending request before answering try_again */
    RX_POLICY_LONG_POLL_MS: intVar(0, 30_000, 600_000),
    /** how long a finished future's result is kept */
    RX_POLICY_FUTURE_TTL_MS: intVar(1, 600_000),
    /** how long a training request waits for a missing earlier seq_id before it fails and the gap is skipped */
    RX_POLICY_SEQ_GAP_TIMEOUT_MS: intVar(1, 120_000, 3_600_000),
    /** forward_backward chunk size announced in client/config */
    RX_POLICY_FWDBWD_MAX_CHUNK_LEN: intVar(1, 1024),
    /** on SIGTERM, how long running work may finish before the server closes anyway */
    RX_POLICY_SHUTDOWN_GRACE_MS: intVar(0, 10_000),
    /** when set, every request but GET /health, /health/live, /health/ready and /api/v1/healthz must carry it (X-API-Key or Bearer) */
    RX_POLICY_API_KEY: z.preprocess(emptyToUndefined, z.string().min(8, 'must be at least 8 characters when set').optional()),
    /** most training models (LoRA adapters with optimizer state) alive at once; create_model beyond: 429 */
    RX_POLICY_MAX_MODELS: intVar(1, 128),
    /** largest LoRA rank create_model accepts (400 beyond); the backend's own limit applies too */
    RX_POLICY_MAX_LORA_RANK: intVar(1, 128),
    /** most results not yet fetched (pending work included); new work beyond: 429 */
    RX_POLICY_MAX_UNFETCHED_RESULTS: intVar(1, 1024),
    /** most bytes (JSON) of finished results not yet fetched; new work beyond: 429 */
    RX_POLICY_MAX_UNFETCHED_RESULT_BYTES: intVar(1, 256 * 1024 * 1024),
    /** the time a client has to send a whole request (408 beyond) */
    RX_POLICY_REQUEST_TIMEOUT_MS: intVar(1, 60_000),
    /** the time a client has to send the request headers (408 beyond); at most the request timeout */
    RX_POLICY_HEADERS_TIMEOUT_MS: intVar(1, 20_000),
    /** most open connections; more are closed at once */
    RX_POLICY_MAX_CONNECTIONS: intVar(1, 512),
    /**
     * the server's URL as its clients reach it (behind a TLS proxy or an ingress: https://host[:port][/prefix]); the
     * signed archive URLs start with it. Unset: the request's own protocol and Host header
     */
    RX_POLICY_PUBLIC_URL: z.preprocess(emptyToUndefined, z.string().trim().transform(publicUrl).optional()),
    /** the hosted-like mode (hosted-like.config.ts): a JSON object, or @<file> holding one; unset: off */
    RX_POLICY_HOSTED_LIKE: z
      .string()
      .optional()
      .transform((v, ctx) => {
        try {
          return parseHostedLike(v);
        } catch (err) {
          ctx.addIssue({ code: z.ZodIssueCode.custom, message: `is not a hosted-like configuration: ${(err as Error).message}` });
          return z.NEVER;
        }
      }),
  })
  .superRefine((e, ctx) => {
    if (e.RX_POLICY_API_KEY === undefined && !isLoopbackHost(e.HOST)) {
      ctx.addIssue({ code: z.ZodIssueCode.custom, path: ['RX_POLICY_API_KEY'], message: `is required when HOST (${e.HOST}) is not a loopback address` });
    }
    if (e.RX_POLICY_HEADERS_TIMEOUT_MS > e.RX_POLICY_REQUEST_TIMEOUT_MS) {
      ctx.addIssue({ code: z.ZodIssueCode.custom, path: ['RX_POLICY_HEADERS_TIMEOUT_MS'], message: 'must be at most RX_POLICY_REQUEST_TIMEOUT_MS' });
    }
  })
  .transform((e) => ({
    host: e.HOST,
    port: e.PORT,
    dataDir: e.RX_DATA_DIR,
    latencyMs: e.RX_POLICY_LATENCY_MS,
    maxBodyBytes: e.RX_POLICY_MAX_BODY_BYTES,
    maxTokensPerRequest: e.RX_POLICY_MAX_TOKENS_PER_REQUEST,
    longPollMs: e.RX_POLICY_LONG_POLL_MS,
    futureTtlMs: e.RX_POLICY_FUTURE_TTL_MS,
    fwdbwdMaxChunkLen: e.RX_POLICY_FWDBWD_MAX_CHUNK_LEN,
    seqGapTimeoutMs: e.RX_POLICY_SEQ_GAP_TIMEOUT_MS,
    shutdownGraceMs: e.RX_POLICY_SHUTDOWN_GRACE_MS,
    apiKey: e.RX_POLICY_API_KEY,
    maxModels: e.RX_POLICY_MAX_MODELS,
    maxLoraRank: e.RX_POLICY_MAX_LORA_RANK,
    maxUnfetchedResults: e.RX_POLICY_MAX_UNFETCHED_RESULTS,
    maxUnfetchedResultBytes: e.RX_POLICY_MAX_UNFETCHED_RESULT_BYTES,
    requestTimeoutMs: e.RX_POLICY_REQUEST_TIMEOUT_MS,
    headersTimeoutMs: e.RX_POLICY_HEADERS_TIMEOUT_MS,
    maxConnections: e.RX_POLICY_MAX_CONNECTIONS,
    publicUrl: e.RX_POLICY_PUBLIC_URL ?? null,
    hostedLike: e.RX_POLICY_HOSTED_LIKE,
  }));

/** RX_POLICY_PUBLIC_URL: an http(s) URL with no query, fragment or credentials, without its trailing slash */
function publicUrl(value: string, ctx: z.RefinementCtx): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    ctx.addIssue({ code: z.ZodIssueCode.custom, message: 'must be a URL (http:// or https://)' });
    return z.NEVER;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') ctx.addIssue({ code: z.ZodIssueCode.custom, message: 'must be an http:// or https:// URL' });
  else if (url.search !== '' || url.hash !== '' || url.username !== '' || url.password !== '') ctx.addIssue({ code: z.ZodIssueCode.custom, message: 'must have no query, fragment or credentials' });
  return value.replace(/\/+$/, '');
}

/** 127.0.0.0/8, ::1 and localhost: only processes on this machine can connect. */
export function isLoopbackHost(host: string): boolean {
  const h = host.toLowerCase().replace(/^\[|\]$/g, '');
  return h === 'localhost' || h === '::1' || /^127(\.\d{1,3}){3}$/.test(h);
}

export type PolicyServerConfig = z.output<typeof policyServerConfigSchema>;

export class PolicyServerConfigError extends Error {
  override readonly name = 'PolicyServerConfigError';
}

/** Parses the environment; throws PolicyServerConfigError with one line naming each bad variable. */
export function parsePolicyServerConfig(env: Record<string, string | undefined>): PolicyServerConfig {
  const parsed = policyServerConfigSchema.safeParse(env);
  if (parsed.success) return parsed.data;
  const issues = parsed.error.issues.map((i) => `${i.path.join('.')} ${i.message}`);
  throw new PolicyServerConfigError(`policy-server configuration: ${issues.join('; ')}`);
}

/** The configuration with every default, overridden by `overrides` (tests). */
export function policyServerConfig(overrides: Partial<PolicyServerConfig> = {}): PolicyServerConfig {
  return { ...parsePolicyServerConfig({}), ...overrides };
}
