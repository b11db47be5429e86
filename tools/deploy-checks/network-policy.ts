// NetworkPolicy semantics (networking.k8s.io/v1) over rendered objects, to ask "may pod A open a connection to
// pod B on port P?": a direction is open when no policy of that type selects the pod, else when one selected
// policy has a rule whose peer matches the other side and whose ports include P (a named port resolves through
// the destination's container ports). Peers: podSelector (same namespace), namespaceSelector (+ podSelector),
// ipBlock (matched by an endpoint's ip). The checks the deployment must pass are at the end.
import type { IContainer } from 'kubernetes-models/v1/Container';
import { containerEnv, containersOf, KubeObject, workloads } from './kustomize-render';

type LabelSelector = { matchLabels?: Record<string, string>; matchExpressions?: Array<{ key: string; operator: string; values?: string[] }> };
type Peer = { podSelector?: LabelSelector; namespaceSelector?: LabelSelector; ipBlock?: { cidr: string; except?: string[] } };
type PolicyPort = { protocol?: string; port?: number | string; endPort?: number };
type Rule = { from?: Peer[]; to?: Peer[]; ports?: PolicyPort[] };
type PolicySpec = { podSelector: LabelSelector; policyTypes?: string[]; ingress?: Rule[]; egress?: Rule[] };

/** A pod as a NetworkPolicy sees it: labels, its namespace's labels, named ports, an address for ipBlocks. */
export type Endpoint = { name: string; namespace: string; namespaceLabels: Record<string, string>; labels: Record<string, string>; namedPorts: Record<string, number>; ip?: string };

export function selects(selector: LabelSelector | undefined, labels: Record<string, string>): boolean {
  if (!selector) return true;
  for (const [k, v] of Object.entries(selector.matchLabels ?? {})) if (labels[k] !== v) return false;
  for (const e of selector.matchExpressions ?? []) {
    const has = e.key in labels;
    const inValues = has && (e.values ?? []).includes(labels[e.key]);
    if (e.operator === 'In' && !inValues) return false;
    if (e.operator === 'NotIn' && inValues) return false;
    if (e.operator === 'Exists' && !has) return false;
    if (e.operator === 'DoesNotExist' && has) return false;
  }
  return true;
}

function ipInCidr(ip: string, cidr: string): boolean {
  const toInt = (a: string): number => a.split('.').reduce((n, o) => n * 256 + Number(o), 0);
  const [base, bits] = cidr.split('/');
  const mask = Number(bits) === 0 ? 0 : 2 ** 32 - 2 ** (32 - Number(bits));
  return (toInt(ip) & mask) >>> 0 === (toInt(base) & mask) >>> 0;
}

function peerMatches(peer: Peer, policyNamespace: string, other: Endpoint): boolean {
  if (peer.ipBlock) {
    if (!other.ip || !ipInCidr(other.ip, peer.ipBlock.cidr)) return false;
    return !(peer.ipBlock.except ?? []).some((c) => ipInCidr(other.ip as string, c));
  }
  const namespaceOk = peer.namespaceSelector ? selects(peer.namespaceSelector, other.namespaceLabels) : other.namespace === policyNamespace;
  return namespaceOk && selects(peer.podSelector, other.labels);
}

function portMatches(ports: PolicyPort[] | undefined, port: number, destination: Endpoint): boolean {
  if (!ports || ports.length === 0) return true;
  return ports.some((p) => {
    if ((p.protocol ?? 'TCP') !== 'TCP') return false;
    if (p.port === undefined) return true;
    if (typeof p.port === 'string') return destination.namedPorts[p.port] === port;
    return p.endPort !== undefined ? port >= p.port && port <= p.endPort : p.port === port;
  });
}

const policiesOf = (objects: KubeObject[]) => objects.filter((o) => o.kind === 'NetworkPolicy').map((o) => ({ namespace: o.metadata.namespace ?? 'default', spec: o.spec as PolicySpec }));

function typesOf(spec: PolicySpec): string[] {
  return spec.policyTypes ?? ['Ingress', ...(spec.egress ? ['Egress'] : [])];
}

/** Whether `from` may open a TCP connection to `to` on `port`, under the policies among `objects`. */
export function mayConnect(objects: KubeObject[], from: Endpoint, to: Endpoint, port: number): boolean {
  const policies = policiesOf(objects);
  const side = (pod: Endpoint, type: 'Ingress' | 'Egress', other: Endpoint): boolean => {
    const selecting = policies.filter((p) => p.namespace === pod.namespace && typesOf(p.spec).includes(type) && selects(p.spec.podSelector, pod.labels));
    if (selecting.length === 0) return true;
    return selecting.some((p) =>
      (type === 'Ingress' ? p.spec.ingress : p.spec.egress)?.some((r) => {
        const peers = type === 'Ingress' ? r.from : r.to;
        return (!peers || peers.length === 0 || peers.some((peer) => peerMatches(peer, p.namespace, other))) && portMatches(r.ports, port, to);
      }) ?? false,
    );
  };
  return side(from, 'Egress', to) && side(to, 'Ingress', from);
}

/** Every workload's pods as endpoints (pod template labels, the container ports' names). */
export function workloadEndpoints(objects: KubeObject[]): Map<string, Endpoint & { ports: number[] }> {
  const out = new Map<string, Endpoint & { ports: number[] }>();
  for (const w of workloads(objects)) {
    const ports = containersOf(w).flatMap((c: IContainer) => c.ports ?? []);
    const namespace = w.object.metadata.namespace ?? 'default';
    out.set(w.name, {
      name: w.name,
      namespace,
      namespaceLabels: { 'kubernetes.io/metadata.name': namespace },
      labels: w.template.metadata?.labels ?? {},
      namedPorts: Object.fromEntries(ports.filter((p) => p.name).map((p) => [p.name as string, p.containerPort])),
      ports: ports.map((p) => p.containerPort),
    });
  }
  return out;
}

/** Pods outside the render, as the checks assume them. */
export const outside = {
  prometheus: { name: 'prometheus', namespace: 'monitoring', namespaceLabels: { 'kubernetes.io/metadata.name': 'monitoring' }, labels: { 'app.kubernetes.io/name': 'prometheus' }, namedPorts: {} },
  dns: { name: 'kube-dns', namespace: 'kube-system', namespaceLabels: { 'kubernetes.io/metadata.name': 'kube-system' }, labels: { 'k8s-app': 'kube-dns' }, namedPorts: {} },
  otherTenant: { name: 'someone-else', namespace: 'team-b', namespaceLabels: { 'kubernetes.io/metadata.name': 'team-b' }, labels: { app: 'notebook' }, namedPorts: {} },
  internet: { name: 'internet (Tinker, datasets)', namespace: '', namespaceLabels: {}, labels: {}, namedPorts: {}, ip: '203.0.113.10' },
  clusterIp: { name: 'a cluster address', namespace: '', namespaceLabels: {}, labels: {}, namedPorts: {}, ip: '10.96.0.10' },
  /** a pod in rx that no manifest plans (`kubectl run`, a future service): covered by the default deny alone */
  strayPod: { name: 'stray-pod', namespace: 'rx', namespaceLabels: { 'kubernetes.io/metadata.name': 'rx' }, labels: { run: 'debug' }, namedPorts: { http: 8080 } },
} satisfies Record<string, Endpoint>;

/** The policy that denies all ingress and egress of every pod in the namespace, by name; problems if none. */
export function defaultDenyProblems(objects: KubeObject[]): string[] {
  const denyAll = policiesOf(objects).filter(
    (p) => p.namespace === 'rx' && Object.keys(p.spec.podSelector ?? {}).every((k) => k === 'matchLabels' && Object.keys(p.spec.podSelector.matchLabels ?? {}).every((l) => l === 'app.kubernetes.io/part-of')) &&
      ['Ingress', 'Egress'].every((t) => (p.spec.policyTypes ?? []).includes(t)) && !(p.spec.ingress?.length) && !(p.spec.egress?.length),
  );
  return denyAll.length > 0 ? [] : ['no NetworkPolicy in namespace rx selects every pod with policyTypes [Ingress, Egress] and no rules (default deny)'];
}

export type Reachability = { from: string; to: string; port: number; allowed: boolean };

/**
 * Who must and must not reach whom: the workers and the controller reach Redis and the backend (the policy
 * server, or the internet over HTTPS for Tinker); Prometheus reaches each rx service's http port; every pod
 * reaches DNS; nothing else reaches Redis, the policy server, the controller or a pod no manifest plans, and rx pods
 * reach no other address.
 */
export function reachabilityProblems(objects: KubeObject[], overlay: 'embedded' | 'tinker'): string[] {
  const pods = workloadEndpoints(objects);
  const pod = (name: string): Endpoint & { ports: number[] } => {
    const p = pods.get(name);
    if (!p) throw new Error(`no workload ${name} in the render`);
    return p;
  };
  const clients = ['sampler', 'grader', 'advantage', 'trainer', 'controller'];
  // the roles that call the model; the grader and advantage never do, so they do not reach the policy server (on
  // Tinker every client keeps HTTPS to the internet: the grader and sampler load the Qwen tokenizer from the hub)
  const callsBackend = (c: string) => c !== 'grader' && c !== 'advantage';
  const services = [...clients, ...(overlay === 'embedded' ? ['policy-server'] : [])];
  const expected: Array<{ from: Endpoint; to: Endpoint; port: number; allowed: boolean }> = [];
  const redis = pod('redis');
  for (const c of clients) {
    expected.push({ from: pod(c), to: redis, port: 6379, allowed: true });
    if (overlay === 'embedded') expected.push({ from: pod(c), to: pod('policy-server'), port: 8000, allowed: callsBackend(c) });
    expected.push({ from: pod(c), to: outside.internet, port: 443, allowed: overlay === 'tinker' });
    expected.push({ from: pod(c), to: outside.clusterIp, port: 443, allowed: false });
  }
  for (const s of services) {
    expected.push({ from: outside.prometheus, to: pod(s), port: pod(s).namedPorts.http, allowed: true });
    expected.push({ from: outside.otherTenant, to: pod(s), port: pod(s).namedPorts.http, allowed: false });
    expected.push({ from: pod(s), to: outside.dns, port: 53, allowed: true });
    expected.push({ from: pod(s), to: outside.otherTenant, port: 8080, allowed: false });
  }
  expected.push({ from: outside.otherTenant, to: redis, port: 6379, allowed: false });
  expected.push({ from: outside.otherTenant, to: outside.strayPod, port: 8080, allowed: false });
  expected.push({ from: pod('sampler'), to: outside.strayPod, port: 8080, allowed: false });
  expected.push({ from: outside.prometheus, to: redis, port: 6379, allowed: false });
  expected.push({ from: pod('sampler'), to: pod('controller'), port: pod('controller').namedPorts.http, allowed: false });
  expected.push({ from: pod('trainer'), to: pod('sampler'), port: pod('sampler').namedPorts.http, allowed: false });
  if (overlay === 'embedded') {
    expected.push({ from: pod('policy-server'), to: redis, port: 6379, allowed: false });
    expected.push({ from: outside.otherTenant, to: pod('policy-server'), port: 8000, allowed: false });
    expected.push({ from: pod('policy-server'), to: outside.internet, port: 443, allowed: false });
  }
  return expected
    .filter((e) => mayConnect(objects, e.from, e.to, e.port) !== e.allowed)
    .map((e) => `${e.from.name} -> ${e.to.name}:${e.port} is ${e.allowed ? 'denied' : 'allowed'}, should be ${e.allowed ? 'allowed' : 'denied'}`);
}

type SecretRef = { secret: string; key: string };

/**
 * The backend's key comes from a Secret by reference: in `embedded`, the policy server's RX_POLICY_API_KEY and
 * every caller's TINKER_API_KEY from rx-secrets/policy-api-key; in `tinker`, every caller's TINKER_API_KEY from
 * rx-secrets/tinker-api-key. No Secret object (so no key) in the render.
 */
export function apiKeyProblems(objects: KubeObject[], overlay: 'embedded' | 'tinker'): string[] {
  const problems: string[] = [];
  const wanted: SecretRef = { secret: 'rx-secrets', key: overlay === 'embedded' ? 'policy-api-key' : 'tinker-api-key' };
  const refOf = (env: string, c: IContainer): SecretRef | undefined => {
    const ref = containerEnv(c, objects, () => '').secretRefs.find((r) => r.env === env);
    return ref ? { secret: ref.secret, key: ref.key } : undefined;
  };
  const same = (a: SecretRef | undefined): boolean => a?.secret === wanted.secret && a.key === wanted.key;
  for (const w of workloads(objects)) {
    for (const c of containersOf(w)) {
      const env = containerEnv(c, objects, () => '').env;
      if (env.RX_ROLE === 'policy-server' && !same(refOf('RX_POLICY_API_KEY', c))) problems.push(`${w.name}: RX_POLICY_API_KEY is not from ${wanted.secret}/${wanted.key}`);
      if (env.RX_BACKEND_URL && !same(refOf('TINKER_API_KEY', c))) problems.push(`${w.name}: TINKER_API_KEY is not from ${wanted.secret}/${wanted.key}`);
    }
  }
  if (overlay === 'embedded' && !workloads(objects).some((w) => containersOf(w).some((c) => containerEnv(c, objects, () => '').env.RX_ROLE === 'policy-server'))) {
    problems.push('no policy server in the render');
  }
  for (const o of objects.filter((x) => x.kind === 'Secret')) problems.push(`Secret ${o.metadata.name} is in the render (a committed key)`);
  return problems;
}
