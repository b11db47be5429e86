import { loadGraderConfig } from './config';

describe('grader config', () => {
  it('defaults to port 3102, takes a tokenizer path and needs no backend: it never calls one', () => {
    const c = loadGraderConfig({ REDIS_URL: 'rediss://:pw@r:6380', RX_TOKENIZER_PATH: '/models/qwen' });
    expect(c).toMatchObject({ PORT: 3102, REDIS_URL: 'rediss://:pw@r:6380', RX_TOKENIZER_PATH: '/models/qwen' });
    expect(Object.keys(loadGraderConfig({ REDIS_URL: 'rediss://:pw@r:6380', RX_BACKEND_URL: 'http://p:8000', TINKER_API_KEY: 'k' }))).not.toEqual(expect.arrayContaining(['RX_BACKEND_URL']));
  });

  it('names every bad variable on one line', () => {
    expect(() => loadGraderConfig({ PORT: 'x' })).toThrow(/^grader: invalid environment: REDIS_URL is required .*; PORT must be a number \(got 'x'\)$/);
  });
});
