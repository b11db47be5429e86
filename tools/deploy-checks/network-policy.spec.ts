// Both overlays, rendered with `kubectl kustomize`: default-deny NetworkPolicies with explicit allows (the workers
// and the controller to Redis and the backend, Prometheus to /metrics, DNS), and the backend's API key from the
// rx-secrets Secret. Each check is also run on a render with the policy or the reference taken out, and must fail.
import { kubectlVersion, KubeObject, Overlay, overlays, renderOverlay } from './kustomize-render';
import { apiKeyProblems, defaultDenyProblems, mayConnect, outside, reachabilityProblems, selects, workloadEndpoints } from './network-policy';

const kubectl = kubectlVersion();
if (!kubectl) console.warn('deploy-checks: kubectl is not on PATH; the NetworkPolicy and API key checks of the overlays are SKIPPED');

const without = (objects: KubeObject[], kind: string, name: string): KubeObject[] => {
  const kept = objects.filter((o) => !(o.kind === kind && o.metadata.name === name));
  expect(kept.length).toBe(objects.length - 1);
  return kept;
};

/** A deep copy with the env var `name` removed from the containers of workload `workload`. */
function withoutEnv(objects: KubeObject[], workload: string, name: string): KubeObject[] {
  const copy = JSON.parse(JSON.stringify(objects)) as KubeObject[];
  const w = copy.find((o) => o.metadata.name === workload && o.kind !== 'Service' && o.kind !== 'NetworkPolicy') as KubeObject;
  const containers = (w.spec as { template: { spec: { containers: Array<{ env?: Array<{ name: string }> }> } } }).template.spec.containers;
  for (const c of containers) c.env = (c.env ?? []).filter((e) => e.name !== name);
  return copy;
}

(kubectl ? describe : describe.skip)(`k8s overlays: network policies and the API key (${kubectl ?? 'no kubectl'})`, () => {
  const rendered = new Map<Overlay, KubeObject[]>();
  const objectsOf = (o: Overlay): KubeObject[] => {
    if (!rendered.has(o)) rendered.set(o, renderOverlay(o));
    return rendered.get(o) as KubeObject[];
  };

  describe.each(overlays)('overlay %s', (overlay) => {
    it('denies all ingress and egress by default; the check fails without that policy', () => {
      expect(defaultDenyProblems(objectsOf(overlay))).toEqual([]);
      expect(defaultDenyProblems(without(objectsOf(overlay), 'NetworkPolicy', 'default-deny'))).toEqual([
        'no NetworkPolicy in namespace rx selects every pod with policyTypes [Ingress, Egress] and no rules (default deny)',
      ]);
    });

    it('allows exactly the planned connections: clients to Redis and the backend, Prometheus to /metrics, DNS', () => {
      expect(reachabilityProblems(objectsOf(overlay), overlay)).toEqual([]);
    });

    it('fails the plan when an allow or the default deny is taken out', () => {
      const objects = objectsOf(overlay);
      expect(reachabilityProblems(without(objects, 'NetworkPolicy', 'to-redis'), overlay)).toContain('sampler -> redis:6379 is denied, should be allowed');
      expect(reachabilityProblems(without(objects, 'NetworkPolicy', 'prometheus-scrape'), overlay)).toContain('prometheus -> controller:3100 is denied, should be allowed');
      expect(reachabilityProblems(without(objects, 'NetworkPolicy', 'allow-dns'), overlay)).toContain('trainer -> kube-dns:53 is denied, should be allowed');
      const open = reachabilityProblems(without(objects, 'NetworkPolicy', 'default-deny'), overlay);
      expect(open).toContain('someone-else -> stray-pod:8080 is allowed, should be denied');
    });

    it('takes the backend key from the rx-secrets Secret by reference; the check fails without it', () => {
      const objects = objectsOf(overlay);
      expect(apiKeyProblems(objects, overlay)).toEqual([]);
      const key = overlay === 'embedded' ? 'policy-api-key' : 'tinker-api-key';
      expect(apiKeyProblems(withoutEnv(objects, 'trainer', 'TINKER_API_KEY'), overlay)).toEqual([`trainer: TINKER_API_KEY is not from rx-secrets/${key}`]);
      const secret: KubeObject = { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'rx-secrets', namespace: 'rx' } };
      expect(apiKeyProblems([...objects, secret], overlay)).toEqual(['Secret rx-secrets is in the render (a committed key)']);
    });
  });

  it('embedded: the policy server requires the key from the Secret; the check fails when it is removed', () => {
    const objects = objectsOf('embedded');
    expect(apiKeyProblems(withoutEnv(objects, 'policy-server', 'RX_POLICY_API_KEY'), 'embedded')).toEqual(['policy-server: RX_POLICY_API_KEY is not from rx-secrets/policy-api-key']);
    // and only the clients and Prometheus reach it
    const pods = workloadEndpoints(objects);
    expect(mayConnect(objects, pods.get('sampler')!, pods.get('policy-server')!, 8000)).toBe(true);
    expect(mayConnect(objects, outside.otherTenant, pods.get('policy-server')!, 8000)).toBe(false);
    expect(mayConnect(without(objects, 'NetworkPolicy', 'policy-server'), pods.get('sampler')!, pods.get('policy-server')!, 8000)).toBe(false);
  });

  it('tinker: the clients reach HTTPS on the internet, not private addresses', () => {
    const objects = objectsOf('tinker');
    const trainer = workloadEndpoints(objects).get('trainer')!;
    expect(mayConnect(objects, trainer, outside.internet, 443)).toBe(true);
    expect(mayConnect(objects, trainer, outside.internet, 80)).toBe(false);
    expect(mayConnect(objects, trainer, outside.clusterIp, 443)).toBe(false);
  });
});

describe('NetworkPolicy semantics of the checks', () => {
  it('matches label selectors as Kubernetes does', () => {
    expect(selects({}, { a: '1' })).toBe(true);
    expect(selects({ matchLabels: { a: '1' } }, { a: '1', b: '2' })).toBe(true);
    expect(selects({ matchLabels: { a: '1' } }, { a: '2' })).toBe(false);
    expect(selects({ matchExpressions: [{ key: 'c', operator: 'In', values: ['x', 'y'] }] }, { c: 'y' })).toBe(true);
    expect(selects({ matchExpressions: [{ key: 'c', operator: 'In', values: ['x'] }] }, {})).toBe(false);
    expect(selects({ matchExpressions: [{ key: 'c', operator: 'NotIn', values: ['x'] }] }, { c: 'x' })).toBe(false);
    expect(selects({ matchExpressions: [{ key: 'c', operator: 'Exists' }] }, {})).toBe(false);
  });

  it('opens a connection only when both the egress and the ingress side allow it', () => {
    const np = (name: string, spec: Record<string, unknown>): KubeObject => ({ apiVersion: 'networking.k8s.io/v1', kind: 'NetworkPolicy', metadata: { name, namespace: 'rx' }, spec });
    const a = { name: 'a', namespace: 'rx', namespaceLabels: { 'kubernetes.io/metadata.name': 'rx' }, labels: { app: 'a' }, namedPorts: {} };
    const b = { name: 'b', namespace: 'rx', namespaceLabels: { 'kubernetes.io/metadata.name': 'rx' }, labels: { app: 'b' }, namedPorts: { http: 80 } };
    expect(mayConnect([], a, b, 80)).toBe(true);
    const deny = np('deny', { podSelector: {}, policyTypes: ['Ingress', 'Egress'] });
    expect(mayConnect([deny], a, b, 80)).toBe(false);
    const ingress = np('in', { podSelector: { matchLabels: { app: 'b' } }, policyTypes: ['Ingress'], ingress: [{ from: [{ podSelector: { matchLabels: { app: 'a' } } }], ports: [{ port: 'http' }] }] });
    const egress = np('out', { podSelector: { matchLabels: { app: 'a' } }, policyTypes: ['Egress'], egress: [{ to: [{ podSelector: { matchLabels: { app: 'b' } } }] }] });
    expect(mayConnect([deny, ingress], a, b, 80)).toBe(false);
    expect(mayConnect([deny, ingress, egress], a, b, 80)).toBe(true);
    expect(mayConnect([deny, ingress, egress], a, b, 81)).toBe(false);
    expect(mayConnect([deny, ingress, egress], b, a, 80)).toBe(false);
  });
});
