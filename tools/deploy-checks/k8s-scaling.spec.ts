// The overlays' disruption budgets and scaling, rendered by `kubectl kustomize`: a PodDisruptionBudget per pipeline
// worker; the tinker overlay's sampler keeps 64 backend requests in flight; the embedded-keda overlay scales the
// sampler and grader with KEDA on the length of the BullMQ wait list each consumes (CPU as a second trigger),
// its password from the Secret, with no CPU HPA left to fight it, while the plain overlays keep their CPU HPAs.
// (KEDA's CRDs have no kubernetes-models schema here: the ScaledObjects are checked field by field.)
import { queuesConsumedBy } from '@rx/pipeline';
import { serviceEnvSchema } from '@rx/service-host';
import { containerEnv, containersOf, find, kubectlVersion, overlays, renderKustomization, renderOverlay, schemaErrors, workloads, type KubeObject } from './kustomize-render';

const kubectl = kubectlVersion();
const describeWithKubectl = kubectl ? describe : describe.skip;
const fakeSecret = (secret: string, key: string): string => `fake-${secret}-${key}`;
const WORKERS = ['sampler', 'grader', 'advantage', 'trainer'] as const;

const podLabels = (objects: KubeObject[], name: string): Record<string, string> | undefined =>
  workloads(objects).find((w) => w.kind === 'Deployment' && w.name === name)?.template.metadata?.labels as Record<string, string> | undefined;
const hpaTargets = (objects: KubeObject[]): string[] =>
  objects.filter((o) => o.kind === 'HorizontalPodAutoscaler').map((h) => (h.spec as { scaleTargetRef: { name: string } }).scaleTargetRef.name).sort();

describeWithKubectl(`k8s scaling and disruption budgets (${kubectl ?? 'no kubectl'})`, () => {
  const rendered = new Map<string, KubeObject[]>();
  const render = (dir: string): KubeObject[] => {
    if (!rendered.has(dir)) rendered.set(dir, dir.startsWith('k8s/') ? renderKustomization(dir) : renderOverlay(dir as (typeof overlays)[number]));
    return rendered.get(dir) as KubeObject[];
  };

  it.each([...overlays, 'k8s/overlays/embedded-keda'])('%s: a valid PodDisruptionBudget (maxUnavailable 1) selects each pipeline worker', (overlay) => {
    const objects = render(overlay);
    for (const worker of WORKERS) {
      const pdb = find(objects, 'PodDisruptionBudget', worker);
      expect([worker, pdb ? schemaErrors(pdb) : 'no PodDisruptionBudget']).toEqual([worker, undefined]);
      const spec = (pdb as KubeObject).spec as { maxUnavailable?: number; minAvailable?: number; selector: { matchLabels: Record<string, string> } };
      expect(spec.maxUnavailable).toBe(1);
      const labels = podLabels(objects, worker);
      expect(Object.entries(spec.selector.matchLabels).every(([k, v]) => labels?.[k] === v)).toBe(true);
      // it selects this worker's pods only
      for (const other of WORKERS.filter((w) => w !== worker)) expect(Object.entries(spec.selector.matchLabels).every(([k, v]) => podLabels(objects, other)?.[k] === v)).toBe(false);
    }
  });

  it('tinker: the sampler keeps 64 backend requests in flight; embedded keeps the default', () => {
    const concurrency = (overlay: (typeof overlays)[number]) => {
      const objects = render(overlay);
      const sampler = workloads(objects).find((w) => w.name === 'sampler')!;
      return containerEnv(containersOf(sampler)[0], objects, fakeSecret).env.RX_CONCURRENCY;
    };
    expect(concurrency('tinker')).toBe('64');
    expect(concurrency('embedded')).toBeUndefined();
  });

  it('embedded and tinker keep the CPU HPAs on sampler and grader', () => {
    for (const overlay of overlays) expect(hpaTargets(render(overlay))).toEqual(['grader', 'sampler']);
  });

  describe('embedded-keda', () => {
    const objects = (): KubeObject[] => render('k8s/overlays/embedded-keda');

    it('is the embedded overlay plus ScaledObjects and their TriggerAuthentication, minus the CPU HPAs', () => {
      const embedded = render('embedded').filter((o) => o.kind !== 'HorizontalPodAutoscaler').map((o) => `${o.kind}/${o.metadata.name}`).sort();
      const keda = objects().map((o) => `${o.kind}/${o.metadata.name}`).sort();
      expect(keda).toEqual([...embedded, 'NetworkPolicy/keda-to-redis', 'ScaledObject/grader', 'ScaledObject/sampler', 'TriggerAuthentication/rx-redis'].sort());
      expect(hpaTargets(objects())).toEqual([]);
      for (const o of objects()) expect([o.metadata.name, o.metadata.namespace, o.metadata.labels?.['app.kubernetes.io/part-of']]).toEqual([o.metadata.name, o.kind === 'Namespace' ? undefined : 'rx', 'rx']);
    });

    it('lets the KEDA operator reach Redis on 6379 and nothing else (the base policies deny the rest)', () => {
      const np = find(objects(), 'NetworkPolicy', 'keda-to-redis') as KubeObject;
      expect(schemaErrors(np)).toBeUndefined();
      type Expr = { key: string; operator: string; values: string[] };
      const spec = np.spec as { podSelector: { matchExpressions: Expr[] }; policyTypes: string[]; ingress: Array<{ from: Array<{ namespaceSelector: { matchExpressions: Expr[] }; podSelector: { matchExpressions: Expr[] } }>; ports: unknown[] }> };
      expect(spec.podSelector.matchExpressions).toEqual([{ key: 'app.kubernetes.io/name', operator: 'In', values: ['redis'] }]);
      expect(spec.policyTypes).toEqual(['Ingress']);
      expect(spec.ingress).toHaveLength(1);
      expect(spec.ingress[0].from.map((f) => [f.namespaceSelector.matchExpressions, f.podSelector.matchExpressions])).toEqual([
        [[{ key: 'kubernetes.io/metadata.name', operator: 'In', values: ['keda'] }], [{ key: 'app.kubernetes.io/name', operator: 'In', values: ['keda-operator'] }]],
      ]);
      expect(spec.ingress[0].ports).toEqual([{ protocol: 'TCP', port: 6379 }]);
      // the Redis pods the policy selects are the ones the ScaledObjects' address names
      const redis = workloads(objects()).find((w) => w.name === 'redis');
      expect(redis?.template.metadata?.labels?.['app.kubernetes.io/name']).toBe('redis');
    });

    it.each(['sampler', 'grader'] as const)('scales %s on the wait list of the queue it consumes, and on CPU', (worker) => {
      const so = find(objects(), 'ScaledObject', worker) as KubeObject;
      expect(so.apiVersion).toBe('keda.sh/v1alpha1');
      type Trigger = { type: string; metadata: Record<string, string>; metricType?: string; authenticationRef?: { name: string } };
      const spec = so.spec as { scaleTargetRef: { kind?: string; name: string }; minReplicaCount: number; maxReplicaCount: number; triggers: Trigger[] };
      expect(workloads(objects()).some((w) => w.kind === (spec.scaleTargetRef.kind ?? 'Deployment') && w.name === spec.scaleTargetRef.name && w.name === worker)).toBe(true);
      expect(spec.minReplicaCount).toBeGreaterThanOrEqual(1);
      expect(spec.maxReplicaCount).toBeGreaterThan(spec.minReplicaCount);
      // BullMQ keeps a queue's waiting jobs in the list <prefix>:<queue>:wait; the prefix is the services' default
      const prefix = serviceEnvSchema(0).shape.RX_QUEUE_PREFIX.parse(undefined);
      const redis = spec.triggers.filter((t) => t.type === 'redis');
      expect(redis.map((t) => t.metadata.listName)).toEqual(queuesConsumedBy(worker).map((q) => `${prefix}:${q}:wait`));
      for (const t of redis) {
        expect(Number(t.metadata.listLength)).toBeGreaterThan(0);
        // the rx Redis Service, its password from the Secret through the TriggerAuthentication
        const [host, port] = t.metadata.address.split(':');
        expect(find(objects(), 'Service', host)).toBeDefined();
        expect(port).toBe('6379');
        const auth = find(objects(), 'TriggerAuthentication', t.authenticationRef?.name ?? '') as KubeObject;
        expect((auth.spec as { secretTargetRef: unknown[] }).secretTargetRef).toEqual([{ parameter: 'password', name: 'rx-secrets', key: 'redis-password' }]);
      }
      expect(spec.triggers.filter((t) => t.type === 'cpu').map((t) => [t.metricType, Number(t.metadata.value)])).toEqual([['Utilization', 70]]);
    });
  });
});
