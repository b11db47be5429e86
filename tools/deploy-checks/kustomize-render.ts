// `kubectl kustomize k8s/overlays/<overlay>` rendered to objects, each validated against the Kubernetes OpenAPI
// schema by its kubernetes-models class, and the pod templates and container env the checks look at.
import { execFileSync } from 'node:child_process';
import { parseAllDocuments } from 'yaml';
import type { IContainer } from 'kubernetes-models/v1/Container';
import type { IPodTemplateSpec } from 'kubernetes-models/v1/PodTemplateSpec';
import { repoPath } from './deploy-layout';

export const overlays = ['embedded', 'tinker'] as const;
export type Overlay = (typeof overlays)[number];

export type KubeObject = {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string>; annotations?: Record<string, string> };
  [field: string]: unknown;
};

// kubectl's client version line, or undefined when kubectl is not on PATH.
export function kubectlVersion(): string | undefined {
  try {
    return execFileSync('kubectl', ['version', '--client'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).split('\n')[0];
  } catch {
    return undefined;
  }
}

export function renderKustomization(dir: string): KubeObject[] {
  const text = execFileSync('kubectl', ['kustomize', repoPath(dir)], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  return parseAllDocuments(text).flatMap((doc) => {
    if (doc.errors.length) throw new Error(`kubectl kustomize ${dir}: YAML error ${doc.errors[0].message}`);
    const obj: unknown = doc.toJSON();
    if (obj === null || obj === undefined) return [];
    if (!isKubeObject(obj)) throw new Error(`kubectl kustomize ${dir}: a document is not a Kubernetes object: ${JSON.stringify(obj).slice(0, 200)}`);
    return [obj];
  });
}

export function renderOverlay(overlay: Overlay): KubeObject[] {
  return renderKustomization(`k8s/overlays/${overlay}`);
}

function isKubeObject(v: unknown): v is KubeObject {
  if (!v || typeof v !== 'object') return false;
  const o = v as Record<string, unknown>;
  const meta = o.metadata as Record<string, unknown> | undefined;
  return typeof o.apiVersion === 'string' && typeof o.kind === 'string' && !!meta && typeof meta.name === 'string';
}

type Validatable = { validate(): void };
type ModelClass = new (data: object) => Validatable;

// The kubernetes-models class for apiVersion/kind (core `v1` is `kubernetes-models/v1`), or undefined.
export function modelClassFor(apiVersion: string, kind: string): ModelClass | undefined {
  let mod: unknown;
  try {
    mod = require(`kubernetes-models/${apiVersion}`);
  } catch {
    return undefined;
  }
  const cls = (mod as Record<string, unknown>)[kind];
  return typeof cls === 'function' ? (cls as ModelClass) : undefined;
}

// Validates obj against its OpenAPI schema; returns the error text, or undefined when valid.
export function schemaErrors(obj: KubeObject): string | undefined {
  const Model = modelClassFor(obj.apiVersion, obj.kind);
  if (!Model) return `no kubernetes-models schema for ${obj.apiVersion} ${obj.kind}`;
  try {
    new Model(obj).validate();
    return undefined;
  } catch (err) {
    return err instanceof Error ? err.message : String(err);
  }
}

export type Workload = { kind: string; name: string; template: IPodTemplateSpec; object: KubeObject };

const workloadKinds = new Set(['Deployment', 'StatefulSet', 'DaemonSet', 'Job', 'ReplicaSet']);

// Every pod template in the render (Deployment, StatefulSet, Job, ...).
export function workloads(objects: KubeObject[]): Workload[] {
  return objects.flatMap((o) => {
    if (!workloadKinds.has(o.kind)) return [];
    const spec = o.spec as { template?: IPodTemplateSpec } | undefined;
    return spec?.template ? [{ kind: o.kind, name: o.metadata.name, template: spec.template, object: o }] : [];
  });
}

export function containersOf(w: Workload): IContainer[] {
  return w.template.spec?.containers ?? [];
}

// Init containers first, then the containers.
export function allContainersOf(w: Workload): IContainer[] {
  return [...(w.template.spec?.initContainers ?? []), ...containersOf(w)];
}

export function find(objects: KubeObject[], kind: string, name: string): KubeObject | undefined {
  return objects.find((o) => o.kind === kind && o.metadata.name === name);
}

export function configMapData(objects: KubeObject[], name: string): Record<string, string> | undefined {
  const cm = find(objects, 'ConfigMap', name);
  return cm ? ((cm.data as Record<string, string> | undefined) ?? {}) : undefined;
}

export type SecretRef = { env: string; secret: string; key: string };
export type ResolvedEnv = { env: Record<string, string>; secretRefs: SecretRef[]; problems: string[] };

// $(VAR) expansion as the kubelet does it: defined names are replaced, unknown ones kept, $$ is a literal $.
export function expandK8s(text: string, env: Readonly<Record<string, string>>): string {
  return text.replace(/\$\$|\$\(([A-Za-z_][A-Za-z0-9_]*)\)/g, (whole, name: string | undefined) =>
    whole === '$$' ? '$' : name !== undefined && name in env ? env[name] : whole,
  );
}

// The environment a container starts with: envFrom ConfigMaps, then env in order (with $(VAR) expansion);
// a secretKeyRef takes `secretValue(secret, key)`. Dangling references are reported in `problems`.
export function containerEnv(
  container: IContainer,
  objects: KubeObject[],
  secretValue: (secret: string, key: string) => string,
): ResolvedEnv {
  const env: Record<string, string> = {};
  const secretRefs: SecretRef[] = [];
  const problems: string[] = [];
  for (const source of container.envFrom ?? []) {
    if (source.configMapRef) {
      const data = configMapData(objects, source.configMapRef.name ?? '');
      if (!data) problems.push(`envFrom configMapRef '${source.configMapRef.name}' names no ConfigMap in the render`);
      else Object.assign(env, data);
    }
    if (source.secretRef) problems.push(`envFrom secretRef '${source.secretRef.name}': use secretKeyRef per variable`);
  }
  for (const e of container.env ?? []) {
    if (e.value !== undefined) {
      env[e.name] = expandK8s(e.value, env);
    } else if (e.valueFrom?.configMapKeyRef) {
      const ref = e.valueFrom.configMapKeyRef;
      const data = configMapData(objects, ref.name ?? '');
      if (!data) problems.push(`${e.name}: configMapKeyRef '${ref.name}' names no ConfigMap in the render`);
      else if (!(ref.key in data)) problems.push(`${e.name}: ConfigMap '${ref.name}' has no key '${ref.key}'`);
      else env[e.name] = data[ref.key];
    } else if (e.valueFrom?.secretKeyRef) {
      const ref = e.valueFrom.secretKeyRef;
      secretRefs.push({ env: e.name, secret: ref.name ?? '', key: ref.key });
      env[e.name] = secretValue(ref.name ?? '', ref.key);
    } else if (e.valueFrom?.fieldRef) {
      env[e.name] = `<${e.valueFrom.fieldRef.fieldPath}>`;
    } else {
      env[e.name] = '';
    }
  }
  return { env, secretRefs, problems };
}
