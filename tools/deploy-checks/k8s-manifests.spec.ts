// The Kubernetes overlays, rendered by `kubectl kustomize` and validated object by object against the Kubernetes
// OpenAPI schemas (kubernetes-models), then checked for what a working deployment needs: probes on /health/live and
// /health/ready,
// resources, non-root, secrets only by reference, every reference resolving inside the render.
import * as fs from 'node:fs';
import type { IContainer } from 'kubernetes-models/v1/Container';
import { PUBLIC_PATHS } from '@rx/policy-server';
import { byteSize } from './byte-size';
import { loadCompose } from './compose-file';
import { repoPath, rxServices, serviceFor } from './deploy-layout';
import {
  allContainersOf, containerEnv, containersOf, find, kubectlVersion, KubeObject, Overlay, overlays, renderOverlay, schemaErrors, workloads, Workload,
} from './kustomize-render';

const kubectl = kubectlVersion();
if (!kubectl) {
  // Visible in the test output: these checks need kubectl (with kustomize) on PATH.
  console.warn('deploy-checks: kubectl is not on PATH; the k8s manifest checks are SKIPPED (install kubectl >= 1.27)');
}
const describeWithKubectl = kubectl ? describe : describe.skip;

const secretName = 'rx-secrets';
// Created by hand next to the Secret (docs/deploy.md): the published spec for the tinker overlay.
const externalConfigMaps: ReadonlyMap<string, readonly string[]> = new Map([['rx-spec', ['spec.json']]]);
const secretKeys = new Set(['redis-password', 'tinker-api-key', 'policy-api-key']);
const fakeSecret = (secret: string, key: string): string => `fake-${secret}-${key}`;
const secretLike = /(PASSWORD|SECRET|TOKEN|API_KEY|CREDENTIAL)/;

const isRxContainer = (c: IContainer): boolean => /^(?:[^/]+\/)*rx(?::[^/]+)?$/.test(c.image ?? '');
const rxWorkloads = (objects: KubeObject[]): Workload[] => workloads(objects).filter((w) => containersOf(w).some(isRxContainer));
const matches = (selector: Record<string, string>, labels: Record<string, string> | undefined): boolean =>
  Object.entries(selector).every(([k, v]) => labels?.[k] === v);

describeWithKubectl(`k8s overlays (${kubectl ?? 'no kubectl'})`, () => {
  // Rendered lazily (describe bodies run even when skipped).
  const rendered = new Map<Overlay, KubeObject[]>();
  const objectsOf = (o: Overlay): KubeObject[] => {
    if (!rendered.has(o)) rendered.set(o, renderOverlay(o));
    return rendered.get(o) as KubeObject[];
  };

  describe.each(overlays)('overlay %s', (overlay) => {
    let objects: KubeObject[] = [];
    beforeAll(() => { objects = objectsOf(overlay); });

    it('renders objects that each validate against their Kubernetes OpenAPI schema', () => {
      expect(objects.length).toBeGreaterThan(5);
      const invalid = objects.flatMap((o) => {
        const err = schemaErrors(o);
        return err ? [`${o.kind}/${o.metadata.name}: ${err}`] : [];
      });
      expect(invalid).toEqual([]);
    });

    it('puts every namespaced object in the rx namespace and labels it part-of rx', () => {
      const stray = objects
        .filter((o) => o.kind !== 'Namespace')
        .filter((o) => o.metadata.namespace !== 'rx' || o.metadata.labels?.['app.kubernetes.io/part-of'] !== 'rx')
        .map((o) => `${o.kind}/${o.metadata.name}`);
      expect(stray).toEqual([]);
      expect(find(objects, 'Namespace', 'rx')).toBeDefined();
    });

    it('commits no secret: no Secret objects, secret-like env only by secretKeyRef to rx-secrets', () => {
      expect(objects.filter((o) => o.kind === 'Secret').map((o) => o.metadata.name)).toEqual([]);
      const problems: string[] = [];
      for (const w of workloads(objects)) {
        for (const c of allContainersOf(w)) {
          for (const e of c.env ?? []) {
            if (secretLike.test(e.name) && !e.valueFrom?.secretKeyRef) problems.push(`${w.name}/${c.name}: ${e.name} is not from a secretKeyRef`);
            const ref = e.valueFrom?.secretKeyRef;
            if (ref && (ref.name !== secretName || !secretKeys.has(ref.key))) problems.push(`${w.name}/${c.name}: ${e.name} refers to ${ref.name}/${ref.key}`);
            if (e.value && /redis:\/\/[^@/]*:[^$@/][^@/]*@/.test(e.value)) problems.push(`${w.name}/${c.name}: ${e.name} has a literal password`);
          }
        }
      }
      const configMaps = objects.filter((o) => o.kind === 'ConfigMap');
      for (const cm of configMaps) {
        for (const key of Object.keys((cm.data as Record<string, string> | undefined) ?? {})) {
          if (secretLike.test(key)) problems.push(`ConfigMap ${cm.metadata.name} holds ${key}`);
        }
      }
      expect(problems).toEqual([]);
    });

    it('resolves every ConfigMap, PVC and Secret reference and every $(VAR) inside the render', () => {
      const problems: string[] = [];
      for (const w of workloads(objects)) {
        for (const c of allContainersOf(w)) {
          const { env, problems: envProblems } = containerEnv(c, objects, fakeSecret);
          problems.push(...envProblems.map((p) => `${w.name}/${c.name}: ${p}`));
          for (const [k, v] of Object.entries(env)) if (/\$\([A-Za-z_]/.test(v)) problems.push(`${w.name}/${c.name}: ${k}=${v} has an unresolved $(VAR)`);
          for (const arg of [...(c.command ?? []), ...(c.args ?? [])]) {
            const unresolved = [...arg.matchAll(/\$\(([A-Za-z_][A-Za-z0-9_]*)\)/g)].map((m) => m[1]).filter((n) => !(n in env));
            if (unresolved.length) problems.push(`${w.name}/${c.name}: argument '${arg}' refers to unset ${unresolved.join(', ')}`);
          }
        }
        for (const v of w.template.spec?.volumes ?? []) {
          const claim = v.persistentVolumeClaim?.claimName;
          if (claim && !find(objects, 'PersistentVolumeClaim', claim)) problems.push(`${w.name}: volume ${v.name} claims missing PVC ${claim}`);
          const cm = v.configMap?.name;
          const external = cm ? externalConfigMaps.get(cm) : undefined;
          if (cm && external) {
            const keys = (v.configMap?.items ?? []).map((i) => i.key);
            if (!keys.length || keys.some((k) => !external.includes(k))) problems.push(`${w.name}: volume ${v.name} reads keys ${keys.join(',')} of external ConfigMap ${cm}`);
          } else if (cm && !find(objects, 'ConfigMap', cm)) problems.push(`${w.name}: volume ${v.name} mounts missing ConfigMap ${cm}`);
        }
        const claimTemplates = ((w.object.spec as { volumeClaimTemplates?: Array<{ metadata?: { name?: string } }> }).volumeClaimTemplates ?? []).map((t) => t.metadata?.name);
        const volumeNames = new Set([...(w.template.spec?.volumes ?? []).map((v) => v.name), ...claimTemplates]);
        for (const c of allContainersOf(w)) {
          for (const m of c.volumeMounts ?? []) if (!volumeNames.has(m.name)) problems.push(`${w.name}/${c.name}: mounts undefined volume ${m.name}`);
        }
      }
      expect(problems).toEqual([]);
    });

    it('gives every rx container startup and liveness probes on /health/live, readiness on /health/ready, on its PORT, resources and a non-root context', () => {
      const problems: string[] = [];
      for (const w of rxWorkloads(objects)) {
        const pod = w.template.spec;
        if (pod?.securityContext?.runAsNonRoot !== true) problems.push(`${w.name}: pod securityContext.runAsNonRoot is not true`);
        if (pod?.automountServiceAccountToken !== false) problems.push(`${w.name}: automountServiceAccountToken is not false`);
        for (const c of containersOf(w).filter(isRxContainer)) {
          const { env } = containerEnv(c, objects, fakeSecret);
          const port = Number(env.PORT);
          const httpPort = (c.ports ?? []).find((p) => p.name === 'http');
          if (!httpPort || httpPort.containerPort !== port) problems.push(`${w.name}: containerPort 'http' ${httpPort?.containerPort} != PORT ${env.PORT}`);
          // terminus: liveness never depends on Redis or the backend (an outage must not restart every pod)
          const probePaths = { startupProbe: '/health/live', readinessProbe: '/health/ready', livenessProbe: '/health/live' } as const;
          for (const [kind, want] of Object.entries(probePaths) as Array<[keyof typeof probePaths, string]>) {
            const get = c[kind]?.httpGet;
            if (!get || get.path !== want || (get.port !== 'http' && get.port !== port)) problems.push(`${w.name}: ${kind} is not GET ${want} on the http port`);
            // the kubelet sends no key: with RX_POLICY_API_KEY set, a probe on a route that needs it gets 401 forever
            if (get?.path !== undefined && env.RX_POLICY_API_KEY !== undefined && !PUBLIC_PATHS.has(get.path)) problems.push(`${w.name}: ${kind} GET ${get.path} needs the API key`);
          }
          for (const side of ['requests', 'limits'] as const) {
            for (const r of ['cpu', 'memory']) if (!c.resources?.[side]?.[r]) problems.push(`${w.name}: no resources.${side}.${r}`);
          }
          if (c.securityContext?.allowPrivilegeEscalation !== false) problems.push(`${w.name}: allowPrivilegeEscalation is not false`);
          if (!c.securityContext?.capabilities?.drop?.includes('ALL')) problems.push(`${w.name}: capabilities are not dropped`);
          if (c.securityContext?.readOnlyRootFilesystem === true && !(c.volumeMounts ?? []).some((m) => m.mountPath === '/tmp')) {
            problems.push(`${w.name}: read-only root without a writable /tmp (swc-node caches there)`);
          }
        }
      }
      expect(problems).toEqual([]);
    });

    it('runs every pod as non-root without privilege escalation, with CPU and memory limits', () => {
      const problems = workloads(objects).flatMap((w) => [
        ...(w.template.spec?.securityContext?.runAsNonRoot === true ? [] : [`${w.name}: runAsNonRoot is not true`]),
        ...allContainersOf(w).flatMap((c) => [
          ...(c.securityContext?.allowPrivilegeEscalation === false ? [] : [`${w.name}/${c.name}: allowPrivilegeEscalation`]),
          ...(c.resources?.limits?.cpu && c.resources?.limits?.memory ? [] : [`${w.name}/${c.name}: no limits`]),
        ]),
      ]);
      expect(problems).toEqual([]);
    });

    it('annotates every rx pod for Prometheus on its PORT at /metrics', () => {
      const problems: string[] = [];
      for (const w of rxWorkloads(objects)) {
        const a = w.template.metadata?.annotations ?? {};
        const c = containersOf(w).find(isRxContainer) as IContainer;
        const { env } = containerEnv(c, objects, fakeSecret);
        if (a['prometheus.io/scrape'] !== 'true' || a['prometheus.io/path'] !== '/metrics' || a['prometheus.io/port'] !== env.PORT) {
          problems.push(`${w.name}: prometheus.io annotations ${JSON.stringify(a)} vs PORT ${env.PORT}`);
        }
      }
      expect(problems).toEqual([]);
    });

    it('runs each rx service as an app that exists, on the port the layout gives it, with a Service in front', () => {
      const problems: string[] = [];
      for (const w of rxWorkloads(objects)) {
        const c = containersOf(w).find(isRxContainer) as IContainer;
        const { env } = containerEnv(c, objects, fakeSecret);
        const role = env.RX_ROLE;
        if (!role || !fs.existsSync(repoPath('apps', role, 'src', 'main.ts'))) problems.push(`${w.name}: RX_ROLE '${role}' is not an app with src/main.ts`);
        const argv = [...(c.command ?? []), ...(c.args ?? [])];
        if (argv.length && argv[0] !== 'rx') problems.push(`${w.name}: command ${argv.join(' ')} is not an rx command`);
        if (argv[0] === 'rx' && !fs.existsSync(repoPath('apps', 'cli', 'src', 'main.ts'))) problems.push(`${w.name}: rx CLI missing`);
        if (role && rxServices.some((s) => s.app === role) && Number(env.PORT) !== serviceFor(role).port) {
          problems.push(`${w.name}: PORT ${env.PORT} but ${role} listens on ${serviceFor(role).port}`);
        }
        const labels = w.template.metadata?.labels ?? {};
        const svc = objects.find((o) => o.kind === 'Service' && matches(((o.spec as { selector?: Record<string, string> }).selector) ?? {}, labels));
        const ports = (svc?.spec as { ports?: Array<{ port: number; targetPort?: string | number }> } | undefined)?.ports ?? [];
        if (!svc || !ports.some((p) => p.port === Number(env.PORT) && (p.targetPort === 'http' || p.targetPort === Number(env.PORT)))) {
          problems.push(`${w.name}: no Service on port ${env.PORT} selects it`);
        }
      }
      expect(problems).toEqual([]);
    });

    it('has Services that each select exactly one workload and target a port it declares', () => {
      const problems: string[] = [];
      for (const svc of objects.filter((o) => o.kind === 'Service')) {
        const spec = svc.spec as { selector?: Record<string, string>; ports?: Array<{ port: number; targetPort?: string | number }> };
        const selected = workloads(objects).filter((w) => matches(spec.selector ?? {}, w.template.metadata?.labels));
        if (selected.length !== 1) { problems.push(`Service ${svc.metadata.name} selects ${selected.length} workloads`); continue; }
        const declared = containersOf(selected[0]).flatMap((c) => c.ports ?? []);
        for (const p of spec.ports ?? []) {
          const target = p.targetPort ?? p.port;
          if (!declared.some((d) => d.name === target || d.containerPort === target)) problems.push(`Service ${svc.metadata.name}: targetPort ${target} not declared`);
        }
      }
      expect(problems).toEqual([]);
    });

    it('autoscales sampler and grader with an HPA on CPU, over Deployments that request CPU', () => {
      const hpas = objects.filter((o) => o.kind === 'HorizontalPodAutoscaler');
      const targets = hpas.map((h) => (h.spec as { scaleTargetRef: { kind: string; name: string } }).scaleTargetRef);
      expect(targets.map((t) => t.name).sort()).toEqual(['grader', 'sampler']);
      for (const t of targets) {
        const dep = workloads(objects).find((w) => w.kind === t.kind && w.name === t.name);
        expect(dep).toBeDefined();
        expect(containersOf(dep as Workload).every((c) => !!c.resources?.requests?.cpu)).toBe(true);
      }
    });

    it('uses the image compose uses for every third-party container, and the one rx image for the rest', () => {
      const compose = loadCompose({ REDIS_PASSWORD: 'x', GRAFANA_ADMIN_PASSWORD: 'x', RX_POLICY_API_KEY: 'x' }).services;
      for (const w of workloads(objects)) {
        for (const c of allContainersOf(w)) {
          if (isRxContainer(c)) expect({ w: w.name, image: c.image }).toEqual({ w: w.name, image: 'rx:local' });
          else expect({ w: w.name, image: c.image }).toEqual({ w: w.name, image: compose[w.name]?.image });
        }
      }
    });

    it('runs Redis as a StatefulSet with its password from the Secret, AOF and noeviction', () => {
      const redis = workloads(objects).find((w) => w.kind === 'StatefulSet' && w.name === 'redis');
      expect(redis).toBeDefined();
      const c = containersOf(redis as Workload)[0];
      const script = [...(c.command ?? []), ...(c.args ?? [])].join(' ');
      expect(script).toMatch(/requirepass \$REDIS_PASSWORD/);
      expect(script).toMatch(/--appendonly yes/);
      expect(script).toMatch(/--maxmemory-policy noeviction/);
      // maxmemory fits the memory limit, with room for the AOF rewrite's fork and the buffers
      const maxmemory = byteSize(/--maxmemory (\S+)/.exec(script)?.[1] ?? '');
      expect(maxmemory).toBeGreaterThan(0);
      expect(maxmemory).toBeLessThanOrEqual(0.8 * byteSize(String(c.resources?.limits?.memory ?? '')));
      expect(c.env?.find((e) => e.name === 'REDIS_PASSWORD')?.valueFrom?.secretKeyRef).toEqual({ name: secretName, key: 'redis-password' });
      expect(c.readinessProbe?.exec?.command?.join(' ')).toMatch(/REDISCLI_AUTH=.*redis-cli ping/);
      const svc = find(objects, 'Service', 'redis');
      expect((svc?.spec as { ports: Array<{ port: number }> }).ports[0].port).toBe(6379);
      // Every REDIS_URL carries the password and points at that Service.
      for (const w of rxWorkloads(objects)) {
        for (const c2 of containersOf(w).filter(isRxContainer)) {
          const { env } = containerEnv(c2, objects, fakeSecret);
          if ('REDIS_URL' in env) expect(env.REDIS_URL).toBe(`redis://:${fakeSecret(secretName, 'redis-password')}@redis:6379`);
        }
      }
    });

    it('runs the controller as a Job in service mode: RX_SPEC from the image or rx-spec, resumable, ends on exit 2/3/4', () => {
      const job = workloads(objects).find((w) => w.kind === 'Job' && w.name === 'controller');
      expect(job).toBeDefined();
      expect(job?.template.spec?.restartPolicy).toBe('Never');
      const policy = (job?.object.spec as { podFailurePolicy?: { rules: Array<{ action: string; onExitCodes?: { operator: string; values: number[] } }> } }).podFailurePolicy;
      expect(policy?.rules).toEqual(expect.arrayContaining([expect.objectContaining({ action: 'FailJob', onExitCodes: expect.objectContaining({ operator: 'In', values: [2, 3, 4] }) })]));
      const c = containersOf(job as Workload)[0];
      expect([...(c.command ?? []), ...(c.args ?? [])]).toEqual([]);
      const { env } = containerEnv(c, objects, fakeSecret);
      expect(env.RX_ROLE).toBe('controller');
      expect(env.RX_RUN_NAME).toMatch(/^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/);
      const spec = env.RX_SPEC;
      const mounts = (c.volumeMounts ?? []).map((m) => ({ m, v: (job?.template.spec?.volumes ?? []).find((v) => v.name === m.name) }));
      const mounted = mounts.find(({ m, v }) => v?.configMap && spec.startsWith(`${m.mountPath}/`));
      const source = mounted
        ? `configMap ${mounted.v?.configMap?.name}/${(mounted.v?.configMap?.items ?? []).find((i) => `${mounted.m.mountPath}/${i.path}` === spec)?.key}`
        : fs.existsSync(repoPath(spec)) ? 'repo' : 'nowhere';
      expect({ spec, source }).toEqual({ spec, source: overlay === 'tinker' ? 'configMap rx-spec/spec.json' : 'repo' });
    });

    it('puts RX_DATA_DIR on the shared data PVC in every rx pod that writes files (the controller, the policy server)', () => {
      const writers: string[] = [];
      for (const w of rxWorkloads(objects)) {
        const c = containersOf(w).find(isRxContainer) as IContainer;
        const { env } = containerEnv(c, objects, fakeSecret);
        if (env.RX_DATA_DIR === undefined) continue;
        writers.push(w.name);
        const dir = env.RX_DATA_DIR;
        const mount = (c.volumeMounts ?? []).find((m) => dir === m.mountPath || dir.startsWith(`${m.mountPath}/`));
        const volume = (w.template.spec?.volumes ?? []).find((v) => v.name === mount?.name);
        expect({ workload: w.name, claim: volume?.persistentVolumeClaim?.claimName }).toEqual({ workload: w.name, claim: 'rx-data' });
      }
      expect(writers).toEqual(expect.arrayContaining(overlay === 'embedded' ? ['controller', 'policy-server'] : ['controller']));
    });
  });

  it('embedded: the policy server is the backend, reached through its Service with its key from the Secret', () => {
    const objects = objectsOf('embedded');
    expect(find(objects, 'Deployment', 'policy-server')).toBeDefined();
    const port = serviceFor('policy-server').port;
    const svc = find(objects, 'Service', 'policy-server');
    expect((svc?.spec as { ports: Array<{ port: number }> }).ports.map((p) => p.port)).toContain(port);
    for (const w of rxWorkloads(objects).filter((x) => x.name !== 'policy-server')) {
      const { env, secretRefs } = containerEnv(containersOf(w)[0], objects, fakeSecret);
      // the grader and advantage never call the backend: neither its URL nor its key
      const caller = w.name !== 'grader' && w.name !== 'advantage';
      expect({ w: w.name, url: env.RX_BACKEND_URL }).toEqual({ w: w.name, url: caller ? `http://policy-server:${port}` : undefined });
      expect(secretRefs.filter((r) => r.env === 'TINKER_API_KEY')).toEqual(caller ? [{ env: 'TINKER_API_KEY', secret: secretName, key: 'policy-api-key' }] : []);
    }
  });

  it('tinker: no policy server; RX_BACKEND_URL is the Tinker service over https; the key comes from the Secret', () => {
    const objects = objectsOf('tinker');
    expect(workloads(objects).map((w) => w.name)).not.toContain('policy-server');
    expect(find(objects, 'Service', 'policy-server')).toBeUndefined();
    const withKey: string[] = [];
    for (const w of rxWorkloads(objects)) {
      const { env, secretRefs } = containerEnv(containersOf(w)[0], objects, fakeSecret);
      if (w.name === 'grader' || w.name === 'advantage') {
        expect({ w: w.name, url: env.RX_BACKEND_URL, key: secretRefs.filter((r) => r.env === 'TINKER_API_KEY') }).toEqual({ w: w.name, url: undefined, key: [] });
        continue;
      }
      expect(new URL(env.RX_BACKEND_URL).protocol).toBe('https:');
      const ref = secretRefs.find((r) => r.env === 'TINKER_API_KEY');
      if (ref) { expect(ref).toEqual({ env: 'TINKER_API_KEY', secret: secretName, key: 'tinker-api-key' }); withKey.push(w.name); }
    }
    expect(withKey.length).toBeGreaterThan(0);
    // GSM8K for the evaluation: fetched by an init container onto the data volume, where RX_GSM8K_DIR points.
    const job = workloads(objects).find((w) => w.kind === 'Job' && w.name === 'controller') as Workload;
    const { env } = containerEnv(containersOf(job)[0], objects, fakeSecret);
    const fetch = (job.template.spec?.initContainers ?? []).find((c) => (c.args ?? []).slice(0, 4).join(' ') === 'rx data fetch gsm8k');
    expect(fetch?.args?.[fetch.args.indexOf('--out') + 1]).toBe(env.RX_GSM8K_DIR);
    expect(env.RX_GSM8K_DIR.startsWith(`${env.RX_DATA_DIR}/`)).toBe(true);
    expect(fetch?.volumeMounts?.map((m) => m.mountPath)).toContain(env.RX_DATA_DIR);
  });
});
