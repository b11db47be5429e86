import { ConfigError } from '@rx/service-host';
import { loadSamplerConfig } from './config';

describe('sampler config', () => {
  it('defaults to port 3101 and takes an optional tokenizer path', () => {
    const c = loadSamplerConfig({ REDIS_URL: 'redis://:pw@r:6379', RX_BACKEND_URL: 'http://policy-server:8000', RX_TOKENIZER_PATH: '/models/qwen' });
    expect(c).toMatchObject({ PORT: 3101, RX_TOKENIZER_PATH: '/models/qwen', RX_CONCURRENCY: 16 });
  });

  it('stops on a bad value with one line', () => {
    expect(() => loadSamplerConfig({ REDIS_URL: 'redis://:pw@r:6379', RX_BACKEND_URL: 'nope' })).toThrow(new ConfigError('sampler: invalid environment: RX_BACKEND_URL must be a URL (got \'nope\')'));
  });
});
