// Cross-check of compose and k8s against the services themselves: the env each container starts with (the image's
// ENV, then what compose or the overlay sets, secrets as fakes) must pass that app's zod config schema; nothing is
// set that the schema does not read; ports agree with the schema's PORT default and with the scrape targets.
import { execFileSync } from 'node:child_process';
import { z } from 'zod';
import { AppConfig, defaultOf, describeIssues, hasConfigModule, loadAppConfig } from './app-config';
import { loadCompose } from './compose-file';
import { infraEnvVars, readOutsideSchema, readRepoFile, repoPath, rxServices, serviceFor } from './deploy-layout';
import { parseDockerfile, stageEnv } from './dockerfile-parse';
import { containerEnv, containersOf, kubectlVersion, KubeObject, overlays, Overlay, renderOverlay, workloads } from './kustomize-render';

const dotEnv = { REDIS_PASSWORD: 'fake-redis-password-0123', GRAFANA_ADMIN_PASSWORD: 'fake-grafana-password', RX_POLICY_API_KEY: 'fake-policy-api-key-0123' };
const fakeSecret = (secret: string, key: string): string => (key === 'tinker-api-key' ? 'tml-fake-tinker-key-0123456789' : `fake-${secret}-${key}`);

// ENV of the image's runtime stage: what every container starts with before compose/k8s add theirs.
function imageEnv(): Record<string, string> {
  const { stages } = parseDockerfile(readRepoFile('Dockerfile'));
  return stageEnv(stages[stages.length - 1]);
}

type Deployed = { where: string; app: string; env: Record<string, string>; secretEnv: string[] };

function composeDeployments(): Deployed[] {
  const { services } = loadCompose(dotEnv);
  return rxServices.filter((s) => services[s.app]).map((s) => ({ where: 'compose', app: s.app, env: services[s.app].environment ?? {}, secretEnv: [] }));
}

function k8sDeployments(overlay: Overlay, objects: KubeObject[]): Deployed[] {
  return workloads(objects).flatMap((w) => containersOf(w).filter((c) => /(^|\/)rx(:|$)/.test(c.image ?? '')).map((c) => {
    const { env, secretRefs } = containerEnv(c, objects, fakeSecret);
    return { where: `k8s/${overlay} ${w.kind}/${w.name}`, app: env.RX_ROLE ?? w.name, env, secretEnv: secretRefs.map((r) => r.env) };
  }));
}

const configs = new Map<string, AppConfig>();
const configOf = (app: string): AppConfig => {
  if (!configs.has(app)) configs.set(app, loadAppConfig(app));
  return configs.get(app) as AppConfig;
};

function checkDeployed(d: Deployed): string[] {
  if (!hasConfigModule(d.app)) return [`${d.where}: apps/${d.app}/src/config.ts does not exist`];
  const config = configOf(d.app);
  const problems: string[] = [];
  const parsed = config.schema.safeParse({ ...imageEnv(), ...d.env });
  if (!parsed.success) problems.push(`${d.where}: ${config.exportName} rejects the env: ${describeIssues(parsed.error as z.ZodError)}`);
  const undeclared = Object.keys(d.env).filter((k) => !(k in config.shape) && !infraEnvVars.has(k) && !(readOutsideSchema[d.app] ?? []).includes(k));
  if (undeclared.length) problems.push(`${d.where}: sets ${undeclared.join(', ')}, which ${config.exportName} does not read`);
  if (Number(d.env.PORT) !== serviceFor(d.app).port) problems.push(`${d.where}: PORT ${d.env.PORT} != ${serviceFor(d.app).port}`);
  return problems;
}

describe('service config schemas', () => {
  it('env vars read outside a schema are really read by that app (the allowance is not stale)', () => {
    for (const [app, vars] of Object.entries(readOutsideSchema)) {
      const sources = execFileSync('grep', ['-rl', '--include=*.ts', '--exclude=*.spec.ts', ...vars.flatMap((v) => ['-e', `process.env.${v}`]), repoPath('apps', app, 'src')], { encoding: 'utf8' });
      expect(sources.trim().length).toBeGreaterThan(0);
    }
  });

  it.each(rxServices.map((s) => s.app))('%s: exports a zod env schema whose PORT default is the port it is deployed on', (app) => {
    const config = loadAppConfig(app);
    expect(Object.keys(config.shape)).toContain('PORT');
    const port = defaultOf(config, 'PORT');
    if (port !== undefined) expect(Number(port)).toBe(serviceFor(app).port);
  });
});

describe('compose vs the services config schemas', () => {
  it.each(rxServices.map((s) => s.app))('%s: the compose env passes its schema, sets nothing it does not read', (app) => {
    const d = composeDeployments().find((x) => x.app === app);
    expect(d).toBeDefined();
    expect(checkDeployed(d as Deployed)).toEqual([]);
  });

  it('sends the policy server its own key: every service that calls it has TINKER_API_KEY = its RX_POLICY_API_KEY', () => {
    const all = composeDeployments();
    const key = all.find((d) => d.app === 'policy-server')?.env.RX_POLICY_API_KEY;
    expect(key).toBe(dotEnv.RX_POLICY_API_KEY);
    const callers = all.filter((d) => d.env.RX_BACKEND_URL);
    expect(callers.map((d) => d.app).sort()).toEqual(['controller', 'sampler', 'trainer']);
    expect(callers.filter((d) => d.env.TINKER_API_KEY !== key).map((d) => d.app)).toEqual([]);
  });
});

const kubectl = kubectlVersion();
if (!kubectl) console.warn('deploy-checks: kubectl is not on PATH; the k8s-vs-config checks are SKIPPED');
(kubectl ? describe : describe.skip)('k8s overlays vs the services config schemas', () => {
  const rendered = new Map<Overlay, Deployed[]>();
  const deployed = (o: Overlay): Deployed[] => {
    if (!rendered.has(o)) rendered.set(o, k8sDeployments(o, renderOverlay(o)));
    return rendered.get(o) as Deployed[];
  };

  it.each(overlays)('%s: every rx container env passes its app schema and sets nothing it does not read', (overlay) => {
    const all = deployed(overlay);
    expect(all.length).toBeGreaterThan(0);
    expect(all.flatMap(checkDeployed)).toEqual([]);
  });

  it('embedded: deploys every service, policy server included', () => {
    expect(deployed('embedded').map((d) => d.app).sort()).toEqual(rxServices.map((s) => s.app).sort());
  });

  it('tinker: every service whose schema reads TINKER_API_KEY gets it from the Secret, and only those', () => {
    const problems: string[] = [];
    for (const d of deployed('tinker')) {
      const reads = hasConfigModule(d.app) && 'TINKER_API_KEY' in configOf(d.app).shape;
      const gets = d.secretEnv.includes('TINKER_API_KEY');
      if (reads !== gets) problems.push(`${d.where}: schema reads TINKER_API_KEY=${reads}, gets it from the Secret=${gets}`);
    }
    expect(problems).toEqual([]);
    expect(deployed('tinker').map((d) => d.app)).not.toContain('policy-server');
  });
});
