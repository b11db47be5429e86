import { loadAdvantageConfig } from './config';

describe('advantage config', () => {
  it('defaults to port 3103 and needs no backend: it never calls one', () => {
    const c = loadAdvantageConfig({ REDIS_URL: 'redis://:pw@r:6379' });
    expect(c).toMatchObject({ PORT: 3103, RX_JOB_CONCURRENCY: 2 });
    // a backend URL or key in the environment (a shared compose block) is not read into its config
    expect(loadAdvantageConfig({ REDIS_URL: 'redis://:pw@r:6379', RX_BACKEND_URL: 'http://p:8000', TINKER_API_KEY: 'k' })).toEqual(c);
  });

  it('stops on a job concurrency of 0 with one line', () => {
    expect(() => loadAdvantageConfig({ REDIS_URL: 'redis://:pw@r:6379', RX_JOB_CONCURRENCY: '0' })).toThrow(
      "advantage: invalid environment: RX_JOB_CONCURRENCY Number must be greater than or equal to 1 (got '0')",
    );
  });
});
