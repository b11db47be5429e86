// docker-compose.yml and the Prometheus/Grafana files it mounts, read the way docker compose reads them (YAML with
// merge keys, then .env interpolation). No Docker engine runs here, so the checks are on the files, plus Redis
// started for real with the exact command compose gives it.
import { ChildProcess, execFileSync, spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import Redis from 'ioredis';
import { parse } from 'yaml';
import { z } from 'zod';
import { argv, interpolate, interpolationsIn, loadCompose, parseDotEnv, readComposeRaw, stringsWithPaths } from './compose-file';
import { byteSize } from './byte-size';
import { readRepoFile, repoPath, rxServices, serviceFor } from './deploy-layout';

// What a user's .env holds (fake values; the checks must never need real secrets).
const dotEnv = { REDIS_PASSWORD: 'fake-redis-password-0123', GRAFANA_ADMIN_PASSWORD: 'fake-grafana-password', RX_POLICY_API_KEY: 'fake-policy-api-key-0123' };
const compose = loadCompose(dotEnv);
const services = compose.services;
const rxServiceNames = rxServices.map((s) => s.app);
const secretLike = /(PASSWORD|SECRET|TOKEN|API_KEY|CREDENTIAL)/;

function healthUrl(test: string[] | string): string | undefined {
  const text = Array.isArray(test) ? test.join(' ') : test;
  return /https?:\/\/[^'"\s)]+/.exec(text)?.[0];
}

describe('docker-compose.yml', () => {
  it('declares Redis, the policy server, the four workers, the controller, Prometheus and Grafana', () => {
    expect(Object.keys(services).sort()).toEqual([...rxServiceNames, 'redis', 'prometheus', 'grafana'].sort());
  });

  it('refuses to start without REDIS_PASSWORD, RX_POLICY_API_KEY and GRAFANA_ADMIN_PASSWORD (no default secret)', () => {
    expect(() => loadCompose({ ...dotEnv, REDIS_PASSWORD: '' })).toThrow(/REDIS_PASSWORD/);
    expect(() => loadCompose({ ...dotEnv, GRAFANA_ADMIN_PASSWORD: '' })).toThrow(/GRAFANA_ADMIN_PASSWORD/);
    expect(() => loadCompose({ REDIS_PASSWORD: 'x', GRAFANA_ADMIN_PASSWORD: 'x' })).toThrow(/RX_POLICY_API_KEY/);
  });

  it("gives the policy server its key from .env, the same key to every service that calls it, and to Prometheus's scrape of it", () => {
    const key = dotEnv.RX_POLICY_API_KEY;
    expect(services['policy-server'].environment?.RX_POLICY_API_KEY).toBe(key);
    const callers = Object.entries(services).filter(([, svc]) => svc.environment?.RX_BACKEND_URL === `http://policy-server:${serviceFor('policy-server').port}`);
    expect(callers.map(([name]) => name).sort()).toEqual(['controller', 'sampler', 'trainer']);
    for (const [name, svc] of callers) expect({ name, key: svc.environment?.TINKER_API_KEY }).toEqual({ name, key });
    // the grader and advantage never call the backend: they are given neither its URL nor its key
    for (const name of ['grader', 'advantage']) expect({ name, env: Object.keys(services[name].environment ?? {}).filter((k) => /^(RX_BACKEND_URL|TINKER_API_KEY)$/.test(k)) }).toEqual({ name, env: [] });
    // Prometheus: a Bearer token from a compose secret whose value is RX_POLICY_API_KEY
    const secrets = z.record(z.object({ environment: z.string() })).parse(compose.secrets);
    const job = z.object({ job_name: z.string(), authorization: z.object({ type: z.literal('Bearer'), credentials_file: z.string() }) }).passthrough()
      .parse((parse(readRepoFile('tools/prometheus/prometheus.yml')) as { scrape_configs: Array<{ job_name: string }> }).scrape_configs.find((j) => j.job_name === 'policy-server'));
    const secretName = /^\/run\/secrets\/([\w.-]+)$/.exec(job.authorization.credentials_file)?.[1] ?? '';
    expect(secrets[secretName]?.environment).toBe('RX_POLICY_API_KEY');
    expect(z.object({ secrets: z.array(z.string()) }).passthrough().parse(services.prometheus).secrets).toContain(secretName);
  });

  it('limits memory, CPU and processes of every service', () => {
    const limits = z.object({ deploy: z.object({ resources: z.object({ limits: z.object({ cpus: z.string(), memory: z.string(), pids: z.number().int().positive() }) }) }) }).passthrough();
    const problems = Object.entries(services).flatMap(([name, svc]) => {
      const parsed = limits.safeParse(svc);
      if (!parsed.success) return [`${name}: ${parsed.error.issues.map((i) => `${i.path.join('.')} ${i.message}`).join('; ')}`];
      const { cpus, memory } = parsed.data.deploy.resources.limits;
      return [...(Number(cpus) > 0 ? [] : [`${name}: cpus ${cpus}`]), ...(byteSize(memory) > 0 ? [] : [`${name}: memory ${memory}`])];
    });
    expect(problems).toEqual([]);
  });

  it("gives Redis a maxmemory that fits its memory limit, with noeviction", () => {
    const script = argv(services.redis.command).join(' ');
    const maxmemory = byteSize(/--maxmemory (\S+)/.exec(script)?.[1] ?? '');
    const limit = byteSize(z.object({ deploy: z.object({ resources: z.object({ limits: z.object({ memory: z.string() }) }) }) }).passthrough().parse(services.redis).deploy.resources.limits.memory);
    expect(maxmemory).toBeGreaterThan(0);
    // room for the AOF rewrite's fork, client buffers and fragmentation
    expect(maxmemory).toBeLessThanOrEqual(0.8 * limit);
    expect(script).toMatch(/--maxmemory-policy noeviction/);
  });

  it('takes every secret-like value from .env, never a literal', () => {
    const raw = z.object({ services: z.record(z.object({ environment: z.record(z.unknown()).optional() }).passthrough()) }).parse(readComposeRaw());
    const literal: string[] = [];
    for (const [name, svc] of Object.entries(raw.services)) {
      for (const [key, value] of Object.entries(svc.environment ?? {})) {
        const text = String(value ?? '');
        if (secretLike.test(key) && !/^\$\{[A-Z_]+:\?[^}]*\}$/.test(text)) literal.push(`${name}.${key}`);
        if (key === 'REDIS_URL' && !text.includes('${REDIS_PASSWORD:?')) literal.push(`${name}.REDIS_URL`);
      }
    }
    expect(literal).toEqual([]);
  });

  it('documents every variable it reads in .env.example, with the required secrets left empty there', () => {
    const example = parseDotEnv(readRepoFile('.env.example'));
    const refs = stringsWithPaths(readComposeRaw()).flatMap((s) => interpolationsIn(s.text));
    expect(refs.length).toBeGreaterThan(0);
    const undocumented = [...new Set(refs.map((r) => r.name))].filter((n) => !(n in example));
    expect(undocumented).toEqual([]);
    const required = [...new Set(refs.filter((r) => r.modifier === ':?').map((r) => r.name))];
    expect(required.sort()).toEqual(['GRAFANA_ADMIN_PASSWORD', 'REDIS_PASSWORD', 'RX_POLICY_API_KEY']);
    expect(required.map((n) => [n, example[n]])).toEqual(required.map((n) => [n, '']));
    expect(fs.readFileSync(repoPath('.gitignore'), 'utf8').split('\n')).toContain('.env');
  });

  it('gives every service a healthcheck; the rx services probe /health on their own PORT', () => {
    for (const [name, svc] of Object.entries(services)) {
      expect({ name, healthcheck: !!svc.healthcheck }).toEqual({ name, healthcheck: true });
    }
    for (const app of rxServiceNames) {
      const svc = services[app];
      const url = healthUrl(svc.healthcheck?.test ?? []);
      expect({ app, url }).toEqual({ app, url: `http://127.0.0.1:${serviceFor(app).port}/health` });
      expect({ app, PORT: svc.environment?.PORT }).toEqual({ app, PORT: String(serviceFor(app).port) });
    }
  });

  it('runs every rx service from the one image built from the Dockerfile, as an app that exists', () => {
    for (const app of rxServiceNames) {
      const svc = services[app];
      expect({ app, image: svc.image }).toEqual({ app, image: 'rx:local' });
      const build = typeof svc.build === 'string' ? { context: svc.build, dockerfile: 'Dockerfile' } : svc.build;
      expect(build?.context).toBe('.');
      expect(fs.existsSync(repoPath(build?.dockerfile ?? 'Dockerfile'))).toBe(true);
      const role = svc.environment?.RX_ROLE;
      expect({ app, role }).toEqual({ app, role: app });
      expect({ app, main: fs.existsSync(repoPath('apps', app, 'src', 'main.ts')) }).toEqual({ app, main: true });
    }
  });

  it('runs the embedded experiment from the controller in service mode (RX_SPEC=specs/embedded.json), resuming after a crash', () => {
    const env = services.controller.environment ?? {};
    expect(argv(services.controller.command)).toEqual([]);
    expect(env.RX_SPEC).toBe('specs/embedded.json');
    expect(fs.existsSync(repoPath(env.RX_SPEC))).toBe(true);
    expect(env.RX_RUN_NAME).toBe('embedded');
    expect(env.RX_DATA_DIR).toBe('/data');
    expect(services.controller.restart).toMatch(/^on-failure/);
    // It starts once every service it drives is healthy.
    const deps = services.controller.depends_on ?? {};
    for (const dep of ['redis', ...rxServiceNames.filter((n) => n !== 'controller')]) {
      expect({ dep, condition: deps[dep]?.condition }).toEqual({ dep, condition: 'service_healthy' });
    }
  });

  it('points the workers at Redis with the password and at the policy server on its port', () => {
    for (const app of ['sampler', 'grader', 'advantage', 'trainer', 'controller']) {
      const env = services[app].environment ?? {};
      expect({ app, REDIS_URL: env.REDIS_URL }).toEqual({ app, REDIS_URL: `redis://:${dotEnv.REDIS_PASSWORD}@redis:6379` });
      if (app !== 'grader' && app !== 'advantage') expect({ app, url: env.RX_BACKEND_URL }).toEqual({ app, url: `http://policy-server:${serviceFor('policy-server').port}` });
    }
    // the controller writes the run under RX_DATA_DIR, on the shared volume; the pipeline services write no files
    expect(services.controller.volumes ?? []).toContain(`rx-data:${services.controller.environment?.RX_DATA_DIR}`);
    for (const app of ['sampler', 'grader', 'advantage', 'trainer']) expect({ app, dir: services[app].environment?.RX_DATA_DIR }).toEqual({ app, dir: undefined });
    expect(services['policy-server'].environment?.HOST).toBe('0.0.0.0');
  });

  it('pins every third-party image to a version tag', () => {
    const unpinned = Object.entries(services)
      .filter(([name]) => !rxServiceNames.includes(name))
      .filter(([, svc]) => !/^[a-z0-9./-]+:(?!latest$)[\w.-]*\d[\w.-]*$/.test(svc.image ?? ''))
      .map(([name, svc]) => `${name}: ${svc.image}`);
    expect(unpinned).toEqual([]);
  });

  it('runs Redis as its unprivileged user on a read-only root', () => {
    const redis = z.object({ user: z.string(), read_only: z.boolean() }).passthrough().parse(services.redis);
    expect(redis.user).not.toMatch(/^(root|0)(:|$)/);
    expect(redis.read_only).toBe(true);
  });

  it('publishes ports on 127.0.0.1 only', () => {
    const open = Object.entries(services).flatMap(([name, svc]) =>
      (svc.ports ?? []).filter((p) => (typeof p === 'string' ? !p.startsWith('127.0.0.1:') : p.host_ip !== '127.0.0.1')).map((p) => `${name}: ${JSON.stringify(p)}`),
    );
    expect(open).toEqual([]);
  });

  it('has depends_on entries that name services of this file', () => {
    const names = new Set(Object.keys(services));
    const dangling = Object.entries(services).flatMap(([name, svc]) => Object.keys(svc.depends_on ?? {}).filter((d) => !names.has(d)).map((d) => `${name} -> ${d}`));
    expect(dangling).toEqual([]);
  });

  it('mounts Prometheus and Grafana files that exist in the repo', () => {
    for (const name of ['prometheus', 'grafana']) {
      for (const v of services[name].volumes ?? []) {
        const source = typeof v === 'string' ? v.split(':')[0] : v.source ?? '';
        if (source.startsWith('./')) expect({ source, exists: fs.existsSync(repoPath(source)) }).toEqual({ source, exists: true });
      }
    }
  });
});

describe('tools/prometheus/prometheus.yml', () => {
  const config = z.object({
    scrape_configs: z.array(z.object({ job_name: z.string(), metrics_path: z.string().optional(), static_configs: z.array(z.object({ targets: z.array(z.string()) })) })),
  }).parse(parse(readRepoFile('tools/prometheus/prometheus.yml')));

  it('scrapes /metrics on every rx service at the port compose gives it', () => {
    const targets = config.scrape_configs.flatMap((j) => j.static_configs.flatMap((s) => s.targets.map((t) => ({ job: j.job_name, target: t, path: j.metrics_path ?? '/metrics' }))));
    for (const app of rxServiceNames) {
      const port = services[app].environment?.PORT;
      expect(targets.filter((t) => t.target.startsWith(`${app}:`))).toEqual([{ job: app, target: `${app}:${port}`, path: '/metrics' }]);
    }
    const hosts = targets.map((t) => t.target.split(':')[0]).filter((h) => h !== '127.0.0.1' && h !== 'localhost');
    expect(hosts.filter((h) => !(h in services))).toEqual([]);
  });
});

describe('tools/grafana provisioning', () => {
  it('provisions the Prometheus datasource and a file provider for the mounted dashboards folder', () => {
    const ds = z.object({ datasources: z.array(z.object({ uid: z.string(), type: z.string(), url: z.string() }).passthrough()) })
      .parse(parse(readRepoFile('tools/grafana/provisioning/datasources/prometheus.yml')));
    expect(ds.datasources).toEqual([expect.objectContaining({ uid: 'rx-prometheus', type: 'prometheus', url: 'http://prometheus:9090' })]);
    const providers = z.object({ providers: z.array(z.object({ type: z.string(), options: z.object({ path: z.string() }) }).passthrough()) })
      .parse(parse(readRepoFile('tools/grafana/provisioning/dashboards/rx.yml')));
    const mounts = (services.grafana.volumes ?? []).filter((v): v is string => typeof v === 'string');
    for (const p of providers.providers) {
      const mount = mounts.find((m) => m.split(':')[1] === p.options.path);
      expect(mount).toBeDefined();
      const hostDir = repoPath((mount as string).split(':')[0]);
      expect(fs.readdirSync(hostDir).filter((f) => f.endsWith('.json')).length).toBeGreaterThan(0);
    }
    expect(services.grafana.environment?.GF_DASHBOARDS_DEFAULT_HOME_DASHBOARD_PATH?.startsWith(providers.providers[0].options.path)).toBe(true);
  });
});

// Redis with the exact compose command (redis-server shimmed to pin the test's port and data dir): it must refuse
// unauthenticated clients and run with AOF and noeviction.
const redisServer = (() => { try { return execFileSync('sh', ['-c', 'command -v redis-server'], { encoding: 'utf8' }).trim(); } catch { return ''; } })();
if (!redisServer) console.warn('deploy-checks: redis-server is not on PATH; the compose Redis command check is SKIPPED');
(redisServer ? describe : describe.skip)('compose Redis command, run with redis-server', () => {
  let child: ChildProcess | undefined;
  let port = 0;
  let dir = '';
  const clients: Redis[] = [];

  beforeAll(async () => {
    port = await new Promise<number>((resolve) => {
      const srv = net.createServer().listen(0, '127.0.0.1', () => { const p = (srv.address() as net.AddressInfo).port; srv.close(() => resolve(p)); });
    });
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rx-compose-redis-'));
    const bin = path.join(dir, 'bin');
    fs.mkdirSync(bin);
    // The real redis-server with the command's arguments, then the test's port and data dir.
    fs.writeFileSync(path.join(bin, 'redis-server'), `#!/bin/sh\nexec ${redisServer} "$@" --port ${port} --bind 127.0.0.1 --dir ${dir}\n`, { mode: 0o755 });
    const [sh, flag, script] = argv(services.redis.command);
    expect([sh, flag]).toEqual(['sh', '-c']);
    child = spawn(sh, [flag, script], { env: { PATH: `${bin}:${process.env.PATH ?? ''}`, REDIS_PASSWORD: services.redis.environment?.REDIS_PASSWORD ?? '' }, stdio: 'ignore' });
    for (let i = 0; i < 100; i++) {
      const up = await new Promise<boolean>((resolve) => { const s = net.connect(port, '127.0.0.1', () => { s.end(); resolve(true); }).on('error', () => resolve(false)); });
      if (up) return;
      await new Promise((r) => setTimeout(r, 50));
    }
    throw new Error('redis-server from the compose command did not come up');
  });

  afterAll(async () => {
    await Promise.all(clients.map((c) => c.quit().catch(() => undefined)));
    if (child && child.exitCode === null) {
      child.kill('SIGTERM');
      await new Promise((r) => child?.once('exit', r));
    }
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  const client = (password: string): Redis => {
    const c = new Redis({ host: '127.0.0.1', port, password, lazyConnect: true, maxRetriesPerRequest: 0, enableOfflineQueue: false, retryStrategy: () => null });
    clients.push(c);
    return c;
  };

  it('refuses clients without the password', async () => {
    // A raw RESP exchange: PING without AUTH.
    const reply = await new Promise<string>((resolve, reject) => {
      const s = net.connect(port, '127.0.0.1', () => s.write('PING\r\n'));
      s.once('data', (d) => { resolve(d.toString()); s.end(); }).once('error', reject);
    });
    expect(reply).toMatch(/^-NOAUTH/);
  });

  it('accepts the password from .env and runs with appendonly yes, maxmemory and noeviction', async () => {
    const c = client(dotEnv.REDIS_PASSWORD);
    await c.connect();
    expect(await c.ping()).toBe('PONG');
    expect(await c.config('GET', 'appendonly')).toEqual(['appendonly', 'yes']);
    expect(await c.config('GET', 'maxmemory')).toEqual(['maxmemory', String(byteSize(/--maxmemory (\S+)/.exec(argv(services.redis.command).join(' '))?.[1] ?? ''))]);
    expect(await c.config('GET', 'maxmemory-policy')).toEqual(['maxmemory-policy', 'noeviction']);
  });

  it('answers its own healthcheck command', () => {
    const test = services.redis.healthcheck?.test;
    expect(Array.isArray(test) && test[0] === 'CMD-SHELL').toBe(true);
    const cmd = (test as string[])[1].replace('redis-cli', `redis-cli -p ${port}`);
    expect(() => execFileSync('sh', ['-c', cmd], { env: { PATH: process.env.PATH ?? '', REDIS_PASSWORD: dotEnv.REDIS_PASSWORD } })).not.toThrow();
    expect(() => execFileSync('sh', ['-c', cmd], { env: { PATH: process.env.PATH ?? '', REDIS_PASSWORD: 'wrong' }, stdio: 'ignore' })).toThrow();
  });
});

// interpolate() is what the checks above rely on; pin its compose semantics.
describe('compose interpolation', () => {
  it('follows docker compose: defaults, required values, $$ escapes', () => {
    expect(interpolate('a ${X:-d} ${Y-e} $$Z ${W}', { Y: '' })).toBe('a d  $Z ');
    expect(interpolate('${X:?need X}', { X: 'v' })).toBe('v');
    expect(() => interpolate('${X:?need X}', { X: '' })).toThrow(/need X/);
  });
});
