// The environment of the pipeline services, validated once at start-up: what every service reads
// (serviceEnvSchema), what a service that calls the model adds (BACKEND_ENV: sampler, trainer) and what one that
// renders tokens adds (TOKENIZER_ENV: sampler, grader); each app's config.ts composes its own. A bad value stops
// the service with one line naming the variable; secrets never appear in logs (redactConfig). A Redis URL without
// a password is refused unless RX_ALLOW_INSECURE_REDIS=1 says this is a development machine.
import { z } from 'zod';
import { redactUrl } from '@rx/queue';

export const DEFAULT_PORTS = Object.freeze({ sampler: 3101, grader: 3102, advantage: 3103, trainer: 3104 } as const);

/** the development flag that lets a service use a Redis without a password */
export const INSECURE_REDIS_FLAG = 'RX_ALLOW_INSECURE_REDIS';

const intFromEnv = (min: number, max: number) => z.coerce.number({ invalid_type_error: 'must be a number' }).int('must be an integer').min(min).max(max);

/** true when the URL carries a password (redis://:<password>@host or redis://<user>:<password>@host) */
export function redisUrlHasPassword(url: string): boolean {
  try {
    return new URL(url).password !== '';
  } catch {
    return false;
  }
}

export function serviceEnvSchema(defaultPort: number) {
  return z.object({
    REDIS_URL: z
      .string({ required_error: 'is required (e.g. redis://:<password>@127.0.0.1:6379)' })
      .url('must be a URL such as redis://:<password>@127.0.0.1:6379')
      .refine((u) => /^rediss?:\/\//.test(u), 'must start with redis:// or rediss://'),
    /** development only: accept a REDIS_URL without a password (checked by parseServiceEnv) */
    [INSECURE_REDIS_FLAG]: z.enum(['0', '1'], { errorMap: () => ({ message: "must be '1' (allow a Redis without a password) or '0'" }) }).default('0'),
    /** jobs a worker runs at once (2: both arms side by side) */
    RX_JOB_CONCURRENCY: intFromEnv(1, 64).default(2),
    PORT: intFromEnv(0, 65535).default(defaultPort),
    /** the interface /health and /metrics listen on (0.0.0.0: probes from outside the container) */
    HOST: z.string().trim().min(1).default('0.0.0.0'),
    /** BullMQ and store key prefix */
    RX_QUEUE_PREFIX: z.string().regex(/^[A-Za-z0-9_.-]{1,64}$/, 'must be 1-64 letters, digits, "_", "." or "-"').default('rx'),
    /** a worker's job lock, renewed every half of it while the job runs; a dead worker's job is redelivered after it */
    RX_LOCK_MS: intFromEnv(500, 3_600_000).default(30_000),
    /** how often workers look for jobs whose lock expired (a dead worker's) */
    RX_STALLED_INTERVAL_MS: intFromEnv(200, 3_600_000).default(15_000),
    /** overrides the pipeline graph's time limit of this service's stages (tests, slow backends) */
    RX_STAGE_TIMEOUT_MS: intFromEnv(1, 24 * 3_600_000).optional(),
  });
}

export type ServiceConfig = z.infer<ReturnType<typeof serviceEnvSchema>>;

/** what a service that calls the model adds (the sampler and the trainer; the grader and advantage never do) */
export const BACKEND_ENV = {
  /** the policy server (embedded backend over HTTP) or the Tinker base URL */
  RX_BACKEND_URL: z.string({ required_error: 'is required (the policy server or Tinker base URL)' }).url('must be a URL'),
  TINKER_API_KEY: z.string().min(1).optional(),
  /** how long a Tinker call may make no progress (429, 5xx, no answer) before it fails (the SDK's 120 min) */
  RX_TINKER_STUCK_TIMEOUT_MS: intFromEnv(1_000, 7 * 24 * 3_600_000).optional(),
};

/** what a service that renders tokens adds (the sampler and the grader) */
export const TOKENIZER_ENV = {
  /** a tokenizer.json (or a folder with one) for Qwen renderers; without it the tokenizer comes from the hub */
  RX_TOKENIZER_PATH: z.string().min(1).optional(),
};

/** what the sampler adds: backend requests in flight at once (its fan-out) */
export const SAMPLER_CONCURRENCY_ENV = {
  RX_CONCURRENCY: intFromEnv(1, 1024).default(16),
};

export type BackendServiceConfig = ServiceConfig & { RX_BACKEND_URL: string; TINKER_API_KEY?: string; RX_TINKER_STUCK_TIMEOUT_MS?: number };

export class ConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ConfigError';
  }
}

const SECRET_VARIABLES = new Set(['TINKER_API_KEY', 'REDIS_URL']);

/** parses env with the schema; throws ConfigError whose message is one line naming every bad variable */
export function parseServiceEnv<S extends z.ZodTypeAny>(service: string, schema: S, env: NodeJS.ProcessEnv | Record<string, string | undefined>): z.infer<S> {
  const r = schema.safeParse(env);
  const problems = r.success
    ? []
    : r.error.issues.map((i) => {
        const name = String(i.path[0] ?? '(env)');
        const value = env[name];
        const shown = value === undefined || SECRET_VARIABLES.has(name) ? '' : ` (got '${value}')`;
        return `${name} ${i.message}${shown}`;
      });
  const insecure = insecureRedisProblem(env);
  if (insecure && !problems.some((p) => p.startsWith('REDIS_URL '))) problems.unshift(insecure);
  if (r.success && problems.length === 0) return r.data;
  throw new ConfigError(`${service}: invalid environment: ${problems.join('; ')}`);
}

/** the refusal of a password-less REDIS_URL (null when it has one, or the development flag is set) */
export function insecureRedisProblem(env: NodeJS.ProcessEnv | Record<string, string | undefined>): string | null {
  const url = env.REDIS_URL;
  if (url === undefined || env[INSECURE_REDIS_FLAG] === '1' || redisUrlHasPassword(url)) return null;
  return `REDIS_URL has no password: use a Redis with requirepass (redis://:<password>@host:6379), or set ${INSECURE_REDIS_FLAG}=1 on a development machine`;
}

/** the config with secrets masked, for start-up logs */
export function redactConfig<C extends { REDIS_URL: string; TINKER_API_KEY?: string; RX_BACKEND_URL?: string }>(config: C): C {
  return {
    ...config,
    REDIS_URL: redactUrl(config.REDIS_URL),
    ...(config.RX_BACKEND_URL === undefined ? {} : { RX_BACKEND_URL: redactUrl(config.RX_BACKEND_URL) }),
    ...(config.TINKER_API_KEY === undefined ? {} : { TINKER_API_KEY: '***' }),
  };
}

/** the worker settings of a service's BullMQ workers, from its config */
export interface WorkerTimings {
  lockMs: number;
  stalledIntervalMs: number;
}

export function workerTimingsOf(config: Pick<ServiceConfig, 'RX_LOCK_MS' | 'RX_STALLED_INTERVAL_MS'>): WorkerTimings {
  return { lockMs: config.RX_LOCK_MS, stalledIntervalMs: config.RX_STALLED_INTERVAL_MS };
}
