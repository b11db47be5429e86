import { loadGraderConfig } from './config';

describe('grader config', () => {
  it('defaults to port 3102', () => {
    expect(loadGraderConfig({ REDIS_URL: 'rediss://:pw@r:6380', RX_BACKEND_URL: 'http://policy-server:8000' })).toMatchObject({ PORT: 3102, REDIS_URL: 'rediss://:pw@r:6380' });
  });

  it('names every bad variable on one line', () => {
    expect(() => loadGraderConfig({ PORT: 'x' })).toThrow(/^grader: invalid environment: REDIS_URL is required .*; RX_BACKEND_URL is required .*; PORT must be a number \(got 'x'\)$/);
  });
});
