import 'reflect-metadata';
import type { AddressInfo } from 'node:net';
import { Module, type DynamicModule, type INestApplication } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { createRxMetrics } from '@rx/metrics';
import { parseExposition } from '@rx/metrics/testing';
import { instrumentBackend } from './instrumented-backend';
import { QueueRepository, RedisConnectionFactory } from '@rx/queue';
import { HashChainPolicyBackend } from '@rx/backend/testing';
import { createRedisHarness } from '@rx/queue/testing';
import { createRxLogger, lineDestination } from './rx-logger';
import { RxServiceModule } from './rx-service.module';
import { backendOf, type ServiceRuntime } from './service-runtime';

const harness = createRedisHarness('service-http');

@Module({})
class ProbeModule {
  static forRuntime(runtime: ServiceRuntime): DynamicModule {
    return { module: ProbeModule, imports: [RxServiceModule.forRuntime(runtime)] };
  }
}

async function start(redisUrl: string, backend: HashChainPolicyBackend | null, waitForRedis = true) {
  const connections = new RedisConnectionFactory(redisUrl);
  if (waitForRedis) await connections.ready();
  const queues = new QueueRepository({ connections, prefix: harness.prefix });
  const metrics = createRxMetrics({ service: 'grader', queueSnapshot: () => queues.snapshot(['rollouts', 'graded-rollouts']) });
  const runtime: ServiceRuntime = {
    service: 'grader',
    config: { REDIS_URL: redisUrl, RX_ALLOW_INSECURE_REDIS: '1', RX_JOB_CONCURRENCY: 1, PORT: 0, HOST: '127.0.0.1', RX_QUEUE_PREFIX: harness.prefix, RX_LOCK_MS: 30_000, RX_STALLED_INTERVAL_MS: 15_000 },
    connections,
    queues,
    backend: backend ? instrumentBackend(backend, metrics) : null,
    metrics,
    stageTimeoutMs: {},
    logger: createRxLogger('grader', lineDestination(() => undefined)),
    log: () => undefined,
  };
  const app: INestApplication = await NestFactory.create(ProbeModule.forRuntime(runtime), { logger: false });
  await app.listen(0, '127.0.0.1');
  const url = `http://127.0.0.1:${(app.getHttpServer().address() as AddressInfo).port}`;
  return {
    runtime,
    url,
    close: async () => {
      await app.close();
      await queues.close();
      await connections.close();
    },
  };
}

afterAll(() => harness.close());

describe('/health and /metrics over real HTTP', () => {
  it('is ready (200) when Redis and the backend answer; 503 naming the one that does not', async () => {
    const backend = new HashChainPolicyBackend();
    const svc = await start(harness.url, backend);
    try {
      const ok = await fetch(`${svc.url}/health`);
      expect(ok.status).toBe(200);
      expect(await ok.json()).toEqual({ status: 'ok', service: 'grader', redis: true, backend: true });
      await backend.close();
      const down = await fetch(`${svc.url}/health`);
      expect(down.status).toBe(503);
      expect(await down.json()).toMatchObject({ status: 'unavailable', redis: true, backend: false });
    } finally {
      await svc.close();
    }
  });

  it('a service without a backend (grader, advantage) is healthy on Redis alone: no backend probe', async () => {
    const svc = await start(harness.url, null);
    try {
      const ok = await fetch(`${svc.url}/health`);
      expect(ok.status).toBe(200);
      expect(await ok.json()).toEqual({ status: 'ok', service: 'grader', redis: true });
      expect(await (await fetch(`${svc.url}/health/ready`)).json()).toEqual({ status: 'ok', info: { redis: { status: 'up' } }, error: {}, details: { redis: { status: 'up' } } });
    } finally {
      await svc.close();
    }
  });

  it('terminus: /health/live answers while the backend is down, /health/ready is 503 naming it', async () => {
    const backend = new HashChainPolicyBackend();
    const svc = await start(harness.url, backend);
    try {
      const ready = await fetch(`${svc.url}/health/ready`);
      expect(ready.status).toBe(200);
      expect(await ready.json()).toMatchObject({ status: 'ok', info: { redis: { status: 'up' }, backend: { status: 'up' } } });
      await backend.close();
      const live = await fetch(`${svc.url}/health/live`);
      expect(live.status).toBe(200);
      expect(await live.json()).toMatchObject({ status: 'ok' });
      const notReady = await fetch(`${svc.url}/health/ready`);
      expect(notReady.status).toBe(503);
      expect(await notReady.json()).toMatchObject({ status: 'error', info: { redis: { status: 'up' } }, error: { backend: { status: 'down' } } });
    } finally {
      await svc.close();
    }
  });

  it('terminus: /health/ready is 503 naming Redis when Redis does not answer', async () => {
    const svc = await start('redis://127.0.0.1:1', new HashChainPolicyBackend(), false);
    try {
      const r = await fetch(`${svc.url}/health/ready`);
      expect(r.status).toBe(503);
      expect(await r.json()).toMatchObject({ error: { redis: { status: 'down' } }, info: { backend: { status: 'up' } } });
      expect((await fetch(`${svc.url}/health/live`)).status).toBe(200);
    } finally {
      await svc.close();
    }
  });

  it('reports 503 when Redis does not answer', async () => {
    const svc = await start('redis://127.0.0.1:1', new HashChainPolicyBackend(), false);
    try {
      const r = await fetch(`${svc.url}/health`);
      expect(r.status).toBe(503);
      expect(await r.json()).toMatchObject({ redis: false, backend: true });
    } finally {
      await svc.close();
    }
  });

  it('serves the rx metrics, the process metrics and live queue depths in the Prometheus text format', async () => {
    const svc = await start(harness.url, new HashChainPolicyBackend());
    try {
      await svc.runtime.queues.queue('rollouts').add('grade', { not: 'checked here' }, { jobId: 'm-grpo_gs8-0-grade' });
      svc.runtime.metrics.recordStep('grpo_gs8', { rewardMean: 0.25, fracNonzeroAdvantage: 0.5, effectiveNeighbors: { p10: 7, p50: 7, p90: 7 } });
      await backendOf(svc.runtime).ping();
      const r = await fetch(`${svc.url}/metrics`);
      expect(r.status).toBe(200);
      expect(r.headers.get('content-type')).toMatch(/^text\/plain;.*version=0\.0\.4/);
      const f = parseExposition(await r.text());
      expect(f.get('rx_queue_depth_jobs')!.metrics).toEqual(
        expect.arrayContaining([
          { labels: { queue: 'rollouts', service: 'grader' }, value: '1' },
          { labels: { queue: 'graded-rollouts', service: 'grader' }, value: '0' },
        ]),
      );
      expect(Number(f.get('rx_step_reward_mean')!.metrics[0].value)).toBe(0.25);
      expect(f.has('process_resident_memory_bytes')).toBe(true);
      expect(f.has('rx_backend_request_duration_seconds')).toBe(true);
    } finally {
      await svc.close();
    }
  });
});
