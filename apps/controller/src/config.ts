// The controller's environment, validated once with zod. `rx run` reads it too (flags override it). A bad value
// stops with one line naming the variable; secrets (TINKER_API_KEY, a Redis password) never appear in messages.
import { z } from 'zod';
import { DEFAULT_LOCK_STALE_MS } from './run/run-lock';

export const CONTROLLER_DEFAULT_PORT = 3100;
export const DEFAULT_REDIS_URL = 'redis://127.0.0.1:6379';

const emptyToUndefined = (v: unknown): unknown => (typeof v === 'string' && v.trim() === '' ? undefined : v);
const intVar = (min: number, max: number) =>
  z.preprocess(emptyToUndefined, z.coerce.number({ invalid_type_error: 'must be a number' }).int('must be an integer').min(min).max(max));

export const controllerConfigSchema = z.object({
  /** the controller's /health, /metrics and /queues (0 picks a free port) */
  PORT: intVar(0, 65535).default(CONTROLLER_DEFAULT_PORT),
  /** interface to bind; unset: 0.0.0.0 in service mode (containers), 127.0.0.1 for rx run (controllerHttpHost) */
  HOST: z.preprocess(emptyToUndefined, z.string().trim().min(1).optional()),
  REDIS_URL: z.preprocess(
    emptyToUndefined,
    z
      .string()
      .url('must be a URL such as redis://127.0.0.1:6379')
      .refine((u) => /^rediss?:\/\//.test(u), 'must start with redis:// or rediss://')
      // unset: rx run starts a private redis-server (infra/redis-locator.ts); service mode uses DEFAULT_REDIS_URL
      .optional(),
  ),
  /** the policy server or the Tinker base URL the services use (--services external) */
  RX_BACKEND_URL: z.preprocess(emptyToUndefined, z.string().url('must be a URL').optional()),
  /** where run directories live when --out is relative to it (main.ts service mode) */
  RX_DATA_DIR: z.preprocess(emptyToUndefined, z.string().min(1).default('runs')),
  /** backend requests the controller keeps in flight (evaluation, held-out sampling) */
  RX_CONCURRENCY: intVar(1, 1024).default(64),
  /** BullMQ and store key prefix shared with the services */
  RX_QUEUE_PREFIX: z.preprocess(emptyToUndefined, z.string().regex(/^[A-Za-z0-9_.-]{1,64}$/, 'must be 1-64 letters, digits, "_", "." or "-"').default('rx')),
  /** service mode: the spec to run and the run's name (its directory is RX_DATA_DIR/runs/RX_RUN_NAME) */
  RX_SPEC: z.preprocess(emptyToUndefined, z.string().min(1).optional()),
  RX_RUN_NAME: z.preprocess(emptyToUndefined, z.string().regex(/^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/, 'must be 1-64 letters, digits, "_", "." or "-"').optional()),
  /** how old the run lock's heartbeat may be before another controller takes the run over (run/run-lock.ts) */
  RX_RUN_LOCK_STALE_MS: intVar(1_000, 3_600_000).default(DEFAULT_LOCK_STALE_MS),
  /** passed to a policy server that rx run spawns */
  RX_POLICY_LATENCY_MS: intVar(0, 600_000).optional(),
  /** the key of the policy server rx run spawns (default: a new random one per run); set it to scrape its /metrics */
  RX_POLICY_API_KEY: z.preprocess(emptyToUndefined, z.string().min(8, 'must be at least 8 characters').optional()),
  /** how long a Tinker call may make no progress (429, 5xx, no answer) before the run stops, resumable (SDK: 120 min); passed to the services */
  RX_TINKER_STUCK_TIMEOUT_MS: intVar(1_000, 7 * 24 * 3_600_000).optional(),
  /** the tokenizer.json every process of the run reads (a Hugging Face base model); else the user's cache (@rx/backend tokenizer-pin.ts) */
  RX_TOKENIZER_PATH: z.preprocess(emptyToUndefined, z.string().min(1).optional()),
  /** the user's cache directory for rx (default $XDG_CACHE_HOME/rx, else ~/.cache/rx): pinned tokenizers */
  RX_CACHE_DIR: z.preprocess(emptyToUndefined, z.string().min(1).optional()),
  /** the Tinker backend (--backend tinker) */
  // sent as an HTTP header: printable Latin-1 only (fetch refuses anything else, mid-run)
  TINKER_API_KEY: z.preprocess(emptyToUndefined, z.string().regex(/^[\x21-\x7e\xa0-\xff]+$/, 'must be printable Latin-1 characters without spaces (it is sent as an HTTP header)').optional()),
  TINKER_BASE_URL: z.preprocess(
    emptyToUndefined,
    z
      .string()
      .url('must be an http(s) URL')
      .refine((u) => /^https?:\/\//i.test(u), 'must be an http(s) URL')
      .optional(),
  ),
});

export type ControllerConfig = z.infer<typeof controllerConfigSchema>;

export class ControllerConfigError extends Error {
  override readonly name = 'ControllerConfigError';
}

const SECRET = new Set(['TINKER_API_KEY', 'REDIS_URL', 'RX_POLICY_API_KEY']);

/** Parses the environment; throws ControllerConfigError, one line naming every bad variable. */
export function parseControllerConfig(env: Record<string, string | undefined>): ControllerConfig {
  const parsed = controllerConfigSchema.safeParse(env);
  if (parsed.success) return parsed.data;
  const problems = parsed.error.issues.map((i) => {
    const name = String(i.path[0] ?? '(env)');
    const value = env[name];
    return `${name} ${i.message}${value === undefined || SECRET.has(name) ? '' : ` (got '${value}')`}`;
  });
  throw new ControllerConfigError(`controller: invalid environment: ${problems.join('; ')}`);
}

/** The URL with its password masked (logs, the run record). */
export function redactUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    return u.toString().replace(/\/$/, '');
  } catch {
    return '<invalid url>';
  }
}
