// Redis discovery and the service supervisor, for real: PING over a socket, a private redis-server when nothing
// answers, and a real service (the policy server on its in-memory test model) spawned, health-checked, stopped.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { createRxMetrics } from '@rx/metrics';
import { parseExposition } from '@rx/metrics/testing';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { startControllerHttp } from '../http/controller-http';
import { createServer } from 'node:http';
import { createServer as createNetServer, type AddressInfo } from 'node:net';
import { freePort, ServiceStartError, ServiceSupervisor, startPrivateRedis, type PrivateRedis } from '@rx/local-stack';
import { locateRedis, pingRedis, RedisUnavailableError } from './redis-locator';
import { deletePrefixKeys } from './step-bus';

jest.setTimeout(60_000);

describe('locateRedis', () => {
  it('uses exactly the Redis at REDIS_URL when it is given and answers', async () => {
    const url = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
    expect(await pingRedis(url)).toBe(true);
    const h = await locateRedis({ url });
    expect(h).toMatchObject({ url, private: false });
    await h.close();
  });

  it('starts a private redis-server with a password of its own when REDIS_URL is unset, says so, and stops it', async () => {
    const lines: string[] = [];
    const h = await locateRedis({ url: undefined, log: (l) => lines.push(l) });
    expect(h.private).toBe(true);
    expect(await pingRedis(h.url)).toBe(true);
    // it has a password of its own (the services refuse a Redis without one)
    const u = new URL(h.url);
    expect(u.password).toMatch(/^[0-9a-f]{32}$/);
    expect(await pingRedis(`redis://127.0.0.1:${u.port}`, 500)).toBe(false);
    expect(lines.join()).not.toContain(u.password);
    expect(lines.join()).toMatch(/REDIS_URL is unset, so a private redis-server/);
    await h.close();
    expect(await pingRedis(h.url, 300)).toBe(false);
  });

  it('keeps a private redis-server data in the run directory, so that a resumed run finds it again', async () => {
    const dataDir = mkdtempSync(path.join(tmpdir(), 'rx-redis-data-'));
    try {
      const first = await locateRedis({ url: undefined, dataDir });
      const a = new Redis(first.url);
      await a.set('rx-resume-probe', 'kept');
      await a.quit();
      await first.close();
      const second = await locateRedis({ url: undefined, dataDir });
      const b = new Redis(second.url);
      expect(await b.get('rx-resume-probe')).toBe('kept');
      await b.quit();
      await second.close();
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  describe('REDIS_URL given but wrong: one line naming what is wrong, never a private Redis in its place', () => {
    let redis: PrivateRedis;
    beforeAll(async () => (redis = await startPrivateRedis({ password: 'right-password-123' })));
    afterAll(() => redis.close());

    it.each([
      ['a wrong password', () => `redis://:wrong-password@127.0.0.1:${redis.port}`, /refused the password in REDIS_URL/],
      ['no password for a Redis that wants one', () => `redis://127.0.0.1:${redis.port}`, /wants a password, and REDIS_URL has none/],
      ['a port where nothing answers', async () => `redis://:secret@127.0.0.1:${await freePort()}`, /nothing answers there \(ECONNREFUSED\)/],
    ] as const)('%s', async (_what, urlOf, why) => {
      const url = await urlOf();
      const started = Date.now();
      const err = await locateRedis({ url }).catch((e: unknown) => e);
      expect(Date.now() - started).toBeLessThan(5_000);
      expect(err).toBeInstanceOf(RedisUnavailableError);
      expect((err as Error).message).toMatch(why);
      expect((err as Error).message).toMatch(/^REDIS_URL redis:\/\/.*127\.0\.0\.1:\d+: .*nothing was written$/);
      expect((err as Error).message).not.toMatch(/secret|wrong-password|right-password/);
    });

    it('something that is not Redis (an HTTP server)', async () => {
      const http = createServer((_q, r) => r.end('no'));
      await new Promise<void>((r) => http.listen(0, '127.0.0.1', r));
      try {
        const port = (http.address() as AddressInfo).port;
        const err = await locateRedis({ url: `redis://127.0.0.1:${port}` }).catch((e: unknown) => e);
        expect((err as Error).message).toMatch(/what answers there is not a Redis server/);
      } finally {
        http.close();
      }
    });

    it('a server that accepts and never answers: one line within the time limit', async () => {
      const silent = createNetServer(() => undefined);
      await new Promise<void>((r) => silent.listen(0, '127.0.0.1', r));
      try {
        const port = (silent.address() as AddressInfo).port;
        const started = Date.now();
        const err = await locateRedis({ url: `redis://127.0.0.1:${port}` }).catch((e: unknown) => e);
        expect(Date.now() - started).toBeLessThan(5_000);
        expect((err as Error).message).toMatch(/nothing answers there \(no answer within 3 s\)/);
      } finally {
        silent.close();
      }
    });
  });
});

describe('ServiceSupervisor', () => {
  let logs: string;
  beforeEach(() => (logs = mkdtempSync(path.join(tmpdir(), 'rx-supervisor-'))));
  afterEach(() => rmSync(logs, { recursive: true, force: true }));

  it('starts a service as a child process, waits for /health, and stops it with SIGTERM', async () => {
    const sup = new ServiceSupervisor({ logsDir: logs });
    const port = await freePort();
    const [svc] = await sup.start([{ name: 'policy-server', port, env: { HOST: '127.0.0.1', RX_DATA_DIR: path.join(logs, 'data') }, entry: 'apps/policy-server/testing/memory.main.ts' }]);
    expect(svc.url).toBe(`http://127.0.0.1:${port}`);
    expect((await fetch(`${svc.url}/health`)).status).toBe(200);
    expect(sup.pids()).toHaveLength(1);
    await sup.stop();
    expect(sup.pids()).toHaveLength(0);
    await expect(fetch(`${svc.url}/health`)).rejects.toThrow();
    expect(readFileSync(svc.logFile, 'utf8')).toMatch(/policy-server: serving the \w+ backend at http:\/\/127\.0\.0\.1:/);
  });

  it('reports a service that exits before it is healthy, with the end of its log', async () => {
    const sup = new ServiceSupervisor({ logsDir: logs, healthTimeoutMs: 30_000 });
    const err = await sup.start([{ name: 'policy-server', port: await freePort(), env: { RX_POLICY_LATENCY_MS: '-5' } }]).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ServiceStartError);
    expect((err as Error).message).toMatch(/policy-server exited \(2\) before it was healthy: .*RX_POLICY_LATENCY_MS/);
  });
});

describe('the controller HTTP server', () => {
  it('answers /health (503 while a dependency is down) and /metrics', async () => {
    let backendUp = false;
    const conn = new Redis(process.env.REDIS_URL as string, { maxRetriesPerRequest: null });
    const queue = new Queue('step-requests', { connection: conn, prefix: `t-ctl-http-${process.pid}` });
    const metrics = createRxMetrics({ service: 'controller', defaultMetrics: false });
    metrics.stepCommitted('gs1_kernel');
    const http = await startControllerHttp(
      { redis: () => pingRedis(process.env.REDIS_URL as string), backend: async () => backendUp, runId: () => 'r1', phase: () => 'training', metrics },
      { host: '127.0.0.1', port: 0, queues: [queue] },
    );
    try {
      const down = await fetch(`${http.url}/health`);
      expect(down.status).toBe(503);
      expect(await down.json()).toMatchObject({ status: 'unavailable', redis: true, backend: false });
      // terminus: live while the backend is down; ready is 503 naming it
      expect((await fetch(`${http.url}/health/live`)).status).toBe(200);
      const notReady = await fetch(`${http.url}/health/ready`);
      expect([notReady.status, await notReady.json()]).toEqual([503, expect.objectContaining({ error: { backend: expect.objectContaining({ status: 'down' }) } })]);
      backendUp = true;
      const ready = await fetch(`${http.url}/health/ready`);
      expect([ready.status, await ready.json()]).toEqual([200, expect.objectContaining({ status: 'ok', info: { redis: { status: 'up' }, backend: { status: 'up' } } })]);
      const up = await fetch(`${http.url}/health`);
      expect(up.status).toBe(200);
      expect(await up.json()).toEqual({ status: 'ok', redis: true, backend: true, run: 'r1', phase: 'training' });
      const text = await (await fetch(`${http.url}/metrics`)).text();
      expect(text).toMatch(/rx_steps_committed_total\{arm="gs1_kernel",service="controller"\} 1/);
      // the step, outcome, phase and one_of series, read back from a scrape
      metrics.recordStep('gs1_kernel', { step: 7, rewardMean: 0.5, fracNonzeroAdvantage: 1, effectiveNeighbors: { p10: 9, p50: 10, p90: 11 }, logprobStats: { klSampleTrainV1: 0.002, klSampleTrainV2: 0.001, entropy: 1.25 } });
      metrics.setGateAllowedValues('executed_group_size_baseline', [8]);
      metrics.setOutcome({ accuracy: { base: 0.33, gs1_kernel: 0.34, grpo_gs8: 0.35 }, effect: -0.01, lower: -0.08, upper: 0.06, margin: -0.03, outcome: 'inconclusive' });
      metrics.setPhase('evaluation', ['training', 'evaluation', 'decision']);
      const scraped = parseExposition(await (await fetch(`${http.url}/metrics`)).text());
      const value = (name: string, labels: Record<string, string> = {}) =>
        Number(scraped.get(name)?.metrics.find((m) => Object.entries(labels).every(([k, v]) => m.labels?.[k] === v))?.value);
      expect(value('rx_step_index', { arm: 'gs1_kernel' })).toBe(7);
      expect(value('rx_step_kl_sample_train', { arm: 'gs1_kernel', version: 'v2' })).toBe(0.001);
      expect(value('rx_step_entropy', { arm: 'gs1_kernel' })).toBe(1.25);
      expect(value('rx_gate_allowed_value', { gate: 'executed_group_size_baseline', index: '0' })).toBe(8);
      expect(['base', 'gs1_kernel', 'grpo_gs8'].map((model) => value('rx_outcome_accuracy_ratio', { model }))).toEqual([0.33, 0.34, 0.35]);
      expect([value('rx_outcome_effect'), value('rx_outcome_interval', { bound: 'lower' }), value('rx_outcome_interval', { bound: 'upper' }), value('rx_outcome_margin')]).toEqual([-0.01, -0.08, 0.06, -0.03]);
      expect(['supported', 'inconclusive', 'refuted'].map((outcome) => value('rx_outcome_decision', { outcome }))).toEqual([0, 1, 0]);
      expect(['training', 'evaluation', 'decision'].map((phase) => value('rx_run_phase', { phase }))).toEqual([0, 1, 0]);
      // bull-board over the queues, read-only
      const board = await fetch(`${http.url}/queues`);
      expect(board.status).toBe(200);
      expect(await board.text()).toMatch(/<html/i);
      const api = await (await fetch(`${http.url}/queues/api/queues`)).json();
      expect(JSON.stringify(api)).toMatch(/step-requests/);
    } finally {
      await http.close();
      await queue.close();
      await conn.quit();
      await deletePrefixKeys(process.env.REDIS_URL as string, `t-ctl-http-${process.pid}`);
    }
  });
});
