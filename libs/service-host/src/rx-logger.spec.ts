import { createRxLogger, lineDestination, REDACTED } from './rx-logger';

describe('the rx logger (pino, secrets redacted by path)', () => {
  const logged = () => {
    const lines: string[] = [];
    return { lines, logger: createRxLogger('trainer', lineDestination((l) => lines.push(l))) };
  };

  it('writes one JSON line with the service, an ISO time and the fields', () => {
    const { lines, logger } = logged();
    logger.info({ event: 'ready', url: 'http://127.0.0.1:1' });
    expect(lines).toHaveLength(1);
    const line = JSON.parse(lines[0]) as Record<string, unknown>;
    expect(line).toMatchObject({ level: 'info', service: 'trainer', event: 'ready', url: 'http://127.0.0.1:1' });
    expect(new Date(line.time as string).toISOString()).toBe(line.time);
  });

  it('redacts a key in a logged config, request headers and a nested payload, and keeps the rest', () => {
    const { lines, logger } = logged();
    logger.info({
      event: 'ready',
      config: { TINKER_API_KEY: 'tml-SECRET-1', PORT: 3104, RX_POLICY_API_KEY: 'SECRET-2' },
      req: { headers: { authorization: 'Bearer SECRET-3', 'x-api-key': 'SECRET-4', host: 'h' } },
      backend: { apiKey: 'SECRET-5', password: 'SECRET-6' },
    });
    expect(lines[0]).not.toMatch(/SECRET/);
    const line = JSON.parse(lines[0]) as { config: Record<string, unknown>; req: { headers: Record<string, unknown> }; backend: Record<string, unknown> };
    expect(line.config).toEqual({ TINKER_API_KEY: REDACTED, PORT: 3104, RX_POLICY_API_KEY: REDACTED });
    expect(line.req.headers).toEqual({ authorization: REDACTED, 'x-api-key': REDACTED, host: 'h' });
    expect(line.backend).toEqual({ apiKey: REDACTED, password: REDACTED });
  });
});
