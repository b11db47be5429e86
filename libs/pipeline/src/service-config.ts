// The environment every pipeline service reads, validated once at start-up. A bad value stops the service
// with one line naming the variable; secrets never appear in logs (redactConfig).
import { z } from 'zod';
import { redactUrl } from './redis-connection.factory';

export const DEFAULT_PORTS = Object.freeze({ sampler: 3101, grader: 3102, advantage: 3103, trainer: 3104 } as const);

const intFromEnv = (min: number, max: number) => z.coerce.number({ invalid_type_error: 'must be a number' }).int('must be an integer').min(min).max(max);

export function serviceEnvSchema(defaultPort: number) {
  return z.object({
    REDIS_URL: z
      .string({ required_error: 'is required (e.g. redis://127.0.0.1:6379)' })
      .url('must be a URL such as redis://127.0.0.1:6379')
      .refine((u) => /^rediss?:\/\//.test(u), 'must start with redis:// or rediss://'),
    /** the policy server (embedded backend over HTTP) or the Tinker base URL */
    RX_BACKEND_URL: z.string({ required_error: 'is required (the policy server or Tinker base URL)' }).url('must be a URL'),
    TINKER_API_KEY: z.string().min(1).optional(),
    /** where the service writes (the trainer's step logs) */
    RX_DATA_DIR: z.string().min(1).default('runs'),
    /** backend requests in flight at once (the sampler's fan-out) */
    RX_CONCURRENCY: intFromEnv(1, 1024).default(16),
    /** jobs a worker runs at once (2: both arms side by side) */
    RX_JOB_CONCURRENCY: intFromEnv(1, 64).default(2),
    PORT: intFromEnv(0, 65535).default(defaultPort),
    /** BullMQ and store key prefix */
    RX_QUEUE_PREFIX: z.string().regex(/^[A-Za-z0-9_.-]{1,64}$/, 'must be 1-64 letters, digits, "_", "." or "-"').default('rx'),
  });
}

export type ServiceConfig = z.infer<ReturnType<typeof serviceEnvSchema>>;

export class ConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ConfigError';
  }
}

/** parses env with the schema; throws ConfigError whose message is one line naming every bad variable */
export function parseServiceEnv<S extends z.ZodTypeAny>(service: string, schema: S, env: NodeJS.ProcessEnv | Record<string, string | undefined>): z.infer<S> {
  const r = schema.safeParse(env);
  if (r.success) return r.data;
  const problems = r.error.issues.map((i) => {
    const name = String(i.path[0] ?? '(env)');
    const value = env[name];
    const shown = value === undefined || name === 'TINKER_API_KEY' || name === 'REDIS_URL' ? '' : ` (got '${value}')`;
    return `${name} ${i.message}${shown}`;
  });
  throw new ConfigError(`${service}: invalid environment: ${problems.join('; ')}`);
}

/** the config with secrets masked, for start-up logs */
export function redactConfig<C extends { REDIS_URL: string; TINKER_API_KEY?: string; RX_BACKEND_URL: string }>(config: C): C {
  return {
    ...config,
    REDIS_URL: redactUrl(config.REDIS_URL),
    RX_BACKEND_URL: redactUrl(config.RX_BACKEND_URL),
    ...(config.TINKER_API_KEY === undefined ? {} : { TINKER_API_KEY: '***' }),
  };
}
