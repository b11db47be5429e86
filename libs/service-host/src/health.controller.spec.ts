// The one health and metrics controller of every rx app, over real HTTP with probes the test controls: /health/live
// never asks a probe, /health and /health/ready ask each one and name those that do not answer (a throw, a rejection,
// a false or a hang), /metrics answers the exposition with its content type, and route decorators reach the health
// routes only.
import 'reflect-metadata';
import type { AddressInfo } from 'node:net';
import { Header, Module, type DynamicModule, type INestApplication } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { healthEndpoints, PROBE_TIMEOUT_MS, type HealthProbes } from './health.controller';

type Answer = 'up' | 'down' | 'throws' | 'rejects' | 'hangs';

function probesOf(state: Record<string, Answer>, calls: string[]): HealthProbes {
  const probe = (name: string) => (): Promise<boolean> => {
    calls.push(name);
    switch (state[name]) {
      case 'up':
        return Promise.resolve(true);
      case 'down':
        return Promise.resolve(false);
      case 'throws':
        throw new Error(`${name} threw`);
      case 'rejects':
        return Promise.reject(new Error(`${name} rejected`));
      case 'hangs':
        return new Promise<boolean>(() => undefined);
    }
  };
  return {
    probes: Object.fromEntries(Object.keys(state).map((name) => [name, probe(name)])),
    details: () => ({ service: 'test', run: 'r1' }),
    metrics: { exposition: async () => 'rx_test_total 1\n', contentType: 'application/openmetrics-text; version=1.0.0; charset=utf-8' },
  };
}

@Module({})
class TestModule {
  static of(probes: HealthProbes): DynamicModule {
    return { module: TestModule, ...healthEndpoints({ useValue: probes }, { health: [Header('X-Health-Route', 'yes')] }) };
  }
}

let app: INestApplication | undefined;
afterEach(async () => {
  await app?.close();
  app = undefined;
});

async function serve(state: Record<string, Answer>): Promise<{ url: string; calls: string[] }> {
  const calls: string[] = [];
  app = await NestFactory.create(TestModule.of(probesOf(state, calls)), { logger: false });
  await app.listen(0, '127.0.0.1');
  return { url: `http://127.0.0.1:${(app.getHttpServer().address() as AddressInfo).port}`, calls };
}

async function get(url: string): Promise<{ status: number; body: unknown; headers: Headers }> {
  const res = await fetch(url);
  const text = await res.text();
  return { status: res.status, body: res.headers.get('content-type')?.startsWith('application/json') ? JSON.parse(text) : text, headers: res.headers };
}

describe('the health and metrics controller', () => {
  jest.setTimeout(20_000);

  it('answers 200 with each probe and the details when every probe answers', async () => {
    const { url, calls } = await serve({ redis: 'up', backend: 'up' });
    expect(await get(`${url}/health`)).toMatchObject({ status: 200, body: { status: 'ok', service: 'test', run: 'r1', redis: true, backend: true } });
    expect((await get(`${url}/health`)).body).not.toHaveProperty('error');
    expect(await get(`${url}/health/ready`)).toMatchObject({ status: 200, body: { status: 'ok', info: { redis: { status: 'up' }, backend: { status: 'up' } } } });
    expect(calls.sort()).toEqual(['backend', 'backend', 'backend', 'redis', 'redis', 'redis']);
  });

  it('answers /health/live without asking any probe, even while every one is down', async () => {
    const { url, calls } = await serve({ redis: 'down', backend: 'throws' });
    expect(await get(`${url}/health/live`)).toMatchObject({ status: 200, body: { status: 'ok', info: {}, error: {} } });
    expect(calls).toEqual([]);
  });

  it('answers 503 naming the probes that throw, reject or say no', async () => {
    for (const failing of ['down', 'throws', 'rejects'] as const) {
      const { url } = await serve({ redis: 'up', backend: failing });
      expect(await get(`${url}/health`)).toMatchObject({ status: 503, body: { status: 'unavailable', redis: true, backend: false, error: 'backend does not answer' } });
      const ready = await get(`${url}/health/ready`);
      expect(ready).toMatchObject({ status: 503, body: { status: 'error', info: { redis: { status: 'up' } }, error: { backend: { status: 'down', message: 'backend does not answer' } } } });
      expect(Object.keys((ready.body as { error: object }).error)).toEqual(['backend']);
      await app?.close();
      app = undefined;
    }
    const { url } = await serve({ redis: 'down', backend: 'down' });
    expect(await get(`${url}/health`)).toMatchObject({ status: 503, body: { redis: false, backend: false, error: 'redis and backend do not answer' } });
  });

  it('counts a probe that does not answer within the probe timeout as down', async () => {
    const { url } = await serve({ redis: 'hangs', backend: 'up' });
    const started = Date.now();
    expect(await get(`${url}/health`)).toMatchObject({ status: 503, body: { redis: false, backend: true, error: 'redis does not answer' } });
    expect(Date.now() - started).toBeGreaterThanOrEqual(PROBE_TIMEOUT_MS - 50);
    expect(Date.now() - started).toBeLessThan(PROBE_TIMEOUT_MS + 2000);
  });

  it('serves the exposition with its content type; the route decorators reach the health routes, not /metrics', async () => {
    const { url } = await serve({ backend: 'up' });
    const metrics = await get(`${url}/metrics`);
    // Express writes the charset parameter first; the same type and parameters
    const contentType = (metrics.headers.get('content-type') ?? '').split(';').map((p) => p.trim());
    expect([metrics.status, metrics.body, contentType[0], contentType.slice(1).sort()]).toEqual([200, 'rx_test_total 1\n', 'application/openmetrics-text', ['charset=utf-8', 'version=1.0.0']]);
    expect(metrics.headers.get('x-health-route')).toBeNull();
    for (const path of ['/health', '/health/live', '/health/ready']) expect((await get(`${url}${path}`)).headers.get('x-health-route')).toBe('yes');
  });
});
