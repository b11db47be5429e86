import { loadTrainerConfig } from './config';

describe('trainer config', () => {
  it('defaults to port 3104 and needs the backend it trains on', () => {
    expect(loadTrainerConfig({ REDIS_URL: 'redis://:pw@r:6379', RX_BACKEND_URL: 'https://tinker.example/services/x', TINKER_API_KEY: 'k' })).toMatchObject({ PORT: 3104, RX_BACKEND_URL: 'https://tinker.example/services/x', TINKER_API_KEY: 'k' });
    expect(() => loadTrainerConfig({ REDIS_URL: 'redis://:pw@r:6379' })).toThrow(/^trainer: invalid environment: RX_BACKEND_URL is required/);
  });

  it('stops on a bad queue prefix with one line', () => {
    expect(() => loadTrainerConfig({ REDIS_URL: 'redis://:pw@r:6379', RX_BACKEND_URL: 'http://p:8000', RX_QUEUE_PREFIX: 'a:b' })).toThrow(/^trainer: invalid environment: RX_QUEUE_PREFIX must be 1-64 letters/);
  });
});
