import { BACKEND_ENV, ConfigError, DEFAULT_PORTS, parseServiceEnv, redactConfig, redisUrlHasPassword, SAMPLER_CONCURRENCY_ENV, serviceEnvSchema } from './service-config';

// the sampler's composition: the common variables, the backend and its fan-out
const schema = serviceEnvSchema(DEFAULT_PORTS.sampler).extend({ ...BACKEND_ENV, ...SAMPLER_CONCURRENCY_ENV });
const base = { REDIS_URL: 'redis://:s3cret@127.0.0.1:6379', RX_BACKEND_URL: 'http://policy-server:8000' };

describe('service environment', () => {
  it('fills defaults: port per service, concurrency, prefix', () => {
    const c = parseServiceEnv('sampler', schema, base);
    expect(c).toEqual({
      ...base,
      RX_ALLOW_INSECURE_REDIS: '0',
      RX_CONCURRENCY: 16,
      RX_JOB_CONCURRENCY: 2,
      PORT: 3101,
      HOST: '0.0.0.0',
      RX_QUEUE_PREFIX: 'rx',
      RX_LOCK_MS: 30_000,
      RX_STALLED_INTERVAL_MS: 15_000,
    });
    expect(DEFAULT_PORTS).toEqual({ sampler: 3101, grader: 3102, advantage: 3103, trainer: 3104 });
  });

  it('refuses a Redis URL without a password unless RX_ALLOW_INSECURE_REDIS=1 (development)', () => {
    const env = { ...base, REDIS_URL: 'redis://127.0.0.1:6379' };
    expect(() => parseServiceEnv('trainer', schema, env)).toThrow(
      new ConfigError('trainer: invalid environment: REDIS_URL has no password: use a Redis with requirepass (redis://:<password>@host:6379), or set RX_ALLOW_INSECURE_REDIS=1 on a development machine'),
    );
    expect(() => parseServiceEnv('trainer', schema, { ...env, RX_ALLOW_INSECURE_REDIS: '0' })).toThrow(/REDIS_URL has no password/);
    expect(parseServiceEnv('trainer', schema, { ...env, RX_ALLOW_INSECURE_REDIS: '1' })).toMatchObject({ REDIS_URL: 'redis://127.0.0.1:6379', RX_ALLOW_INSECURE_REDIS: '1' });
    expect(parseServiceEnv('trainer', schema, { ...env, REDIS_URL: 'rediss://rx:pw@redis:6380' }).REDIS_URL).toBe('rediss://rx:pw@redis:6380');
    expect(() => parseServiceEnv('trainer', schema, { ...env, RX_ALLOW_INSECURE_REDIS: 'yes' })).toThrow(
      "trainer: invalid environment: REDIS_URL has no password: use a Redis with requirepass (redis://:<password>@host:6379), or set RX_ALLOW_INSECURE_REDIS=1 on a development machine; RX_ALLOW_INSECURE_REDIS must be '1' (allow a Redis without a password) or '0' (got 'yes')",
    );
    expect(redisUrlHasPassword('redis://user@host:6379')).toBe(false);
  });

  it('reads the worker lock, stall check and stage time limit', () => {
    const c = parseServiceEnv('trainer', schema, { ...base, RX_LOCK_MS: '2000', RX_STALLED_INTERVAL_MS: '500', RX_STAGE_TIMEOUT_MS: '1500', HOST: '127.0.0.1' });
    expect(c).toMatchObject({ RX_LOCK_MS: 2000, RX_STALLED_INTERVAL_MS: 500, RX_STAGE_TIMEOUT_MS: 1500, HOST: '127.0.0.1' });
    expect(() => parseServiceEnv('trainer', schema, { ...base, RX_LOCK_MS: '10' })).toThrow("trainer: invalid environment: RX_LOCK_MS Number must be greater than or equal to 500 (got '10')");
  });

  it('reads numbers from strings', () => {
    expect(parseServiceEnv('sampler', schema, { ...base, RX_CONCURRENCY: '64', PORT: '0' })).toMatchObject({ RX_CONCURRENCY: 64, PORT: 0 });
  });

  it('a bad value is one line naming the variable and the value', () => {
    const fail = (env: Record<string, string>) => {
      try {
        parseServiceEnv('sampler', schema, env);
      } catch (err) {
        expect(err).toBeInstanceOf(ConfigError);
        return (err as Error).message;
      }
      throw new Error('expected a ConfigError');
    };
    const m = fail({ ...base, RX_CONCURRENCY: 'lots' });
    expect(m).toBe("sampler: invalid environment: RX_CONCURRENCY must be a number (got 'lots')");
    expect(m).not.toContain('\n');
    expect(fail({ ...base, REDIS_URL: 'http://x' })).toBe('sampler: invalid environment: REDIS_URL must start with redis:// or rediss://');
    expect(fail({ RX_BACKEND_URL: 'http://x' })).toMatch(/^sampler: invalid environment: REDIS_URL is required/);
    expect(fail({ ...base, PORT: '70000' })).toMatch(/PORT Number must be less than or equal to 65535 \(got '70000'\)/);
  });

  it('never echoes a secret, and redacts it for logs', () => {
    const c = parseServiceEnv('trainer', schema, { ...base, REDIS_URL: 'redis://:hunter2@redis:6379', TINKER_API_KEY: 'tml-abc' });
    const shown = JSON.stringify(redactConfig(c));
    expect(shown).not.toContain('hunter2');
    expect(shown).not.toContain('tml-abc');
    expect(shown).toContain('redis://:***@redis:6379');
    try {
      parseServiceEnv('trainer', schema, { ...base, REDIS_URL: 'redis://:hunter2@' });
    } catch (err) {
      expect((err as Error).message).not.toContain('hunter2');
    }
  });
});
