import { ConfigError, DEFAULT_PORTS, parseServiceEnv, redactConfig, serviceEnvSchema } from './service-config';

const schema = serviceEnvSchema(DEFAULT_PORTS.sampler);
const base = { REDIS_URL: 'redis://127.0.0.1:6379', RX_BACKEND_URL: 'http://policy-server:8000' };

describe('service environment', () => {
  it('fills defaults: port per service, data dir, concurrency, prefix', () => {
    const c = parseServiceEnv('sampler', schema, base);
    expect(c).toEqual({ ...base, RX_DATA_DIR: 'runs', RX_CONCURRENCY: 16, RX_JOB_CONCURRENCY: 2, PORT: 3101, RX_QUEUE_PREFIX: 'rx' });
    expect(DEFAULT_PORTS).toEqual({ sampler: 3101, grader: 3102, advantage: 3103, trainer: 3104 });
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
