import { inspect } from 'node:util';
import { TinkerBackend } from './tinker-backend';
import { DEFAULT_TINKER_BASE_URL, parseTinkerEnv } from './tinker-config';
import { TinkerConfigError } from './tinker-errors';

const KEY = 'tml-secret-value-42';

describe('Tinker configuration from the environment', () => {
  it('reads the base URL and key, defaulting to the production service', () => {
    expect(parseTinkerEnv({ TINKER_API_KEY: KEY })).toEqual({ TINKER_BASE_URL: DEFAULT_TINKER_BASE_URL, TINKER_API_KEY: KEY });
    expect(parseTinkerEnv({ TINKER_API_KEY: KEY, TINKER_BASE_URL: 'http://127.0.0.1:8000' }).TINKER_BASE_URL).toBe('http://127.0.0.1:8000');
  });

  it('says in one line what is missing or malformed', () => {
    expect(() => parseTinkerEnv({})).toThrow(new TinkerConfigError('Tinker configuration: TINKER_API_KEY is not set: export TINKER_API_KEY=<your Tinker API key>'));
    expect(() => parseTinkerEnv({ TINKER_API_KEY: '  ' })).toThrow('TINKER_API_KEY is not set');
    const err = (() => {
      try {
        parseTinkerEnv({ TINKER_API_KEY: KEY, TINKER_BASE_URL: 'ftp://x' });
      } catch (e) {
        return e as Error;
      }
      return undefined;
    })();
    expect(err?.message).toBe('Tinker configuration: TINKER_BASE_URL must be an http(s) URL');
    expect(err?.message).not.toContain(KEY);
    expect(err?.message.split('\n')).toHaveLength(1);
  });

  it('builds a backend whose printed form never shows the key', async () => {
    const backend = TinkerBackend.fromEnv({ TINKER_API_KEY: KEY, TINKER_BASE_URL: 'http://127.0.0.1:9' });
    try {
      expect(backend.kind).toBe('tinker');
      expect(backend.baseUrl).toBe('http://127.0.0.1:9');
      expect(inspect(backend, { depth: 10, showHidden: true })).not.toContain(KEY);
      expect(JSON.stringify(backend)).not.toContain(KEY);
    } finally {
      await backend.close();
    }
  });
});
