// Where @swc/core unpacks its native addon (SWC_NATIVE_BINDING_CACHE), held against what each deployment mounts.
// swc loads the addon from that cache, so it must be writable and allow exec: under a read-only root that means a
// mounted volume, never Docker's /tmp tmpfs (noexec). swc also refuses a cache with an ancestor other users may
// write, which an emptyDir (mode 0777) and a PVC under fsGroup (group-writable) both have, unless its ancestor
// check is turned off (SWC_NATIVE_BINDING_CACHE_SKIP_SECURITY_CHECK=1).
import type { IContainer } from 'kubernetes-models/v1/Container';
import type { IVolume } from 'kubernetes-models/v1/Volume';
import type { ComposeService } from './compose-file';

export const cacheVar = 'SWC_NATIVE_BINDING_CACHE';
export const skipCheckVar = 'SWC_NATIVE_BINDING_CACHE_SKIP_SECURITY_CHECK';

const isUnder = (file: string, dir: string): boolean => file === dir || file.startsWith(`${dir.replace(/\/+$/, '')}/`);

function cachePathProblem(where: string, cache: string | undefined): string | undefined {
  if (!cache) return `${where}: ${cacheVar} is not set (swc falls back to ~/.cache and $TMPDIR)`;
  if (!cache.startsWith('/')) return `${where}: ${cacheVar}=${cache} is not an absolute path`;
  if (isUnder(cache, '/tmp')) return `${where}: ${cacheVar}=${cache} is under /tmp, a noexec tmpfs under Docker`;
  return undefined;
}

// The image: the cache is set in its runtime ENV, on one of its VOLUMEs (a container without its own mounts still
// gets a writable one there).
export function imageCacheProblems(env: Readonly<Record<string, string>>, volumes: readonly string[]): string[] {
  const cache = env[cacheVar];
  const bad = cachePathProblem('image', cache);
  if (bad) return [bad];
  return volumes.some((v) => isUnder(cache, v)) ? [] : [`image: ${cacheVar}=${cache} is on no VOLUME (${volumes.join(', ') || 'none'})`];
}

// A compose service's mounts: volume or bind targets (not read-only), and its tmpfs paths.
function composeMounts(svc: ComposeService): { writable: string[]; tmpfs: string[] } {
  const writable = (svc.volumes ?? []).flatMap((v) => {
    if (typeof v === 'string') {
      const parts = v.split(':');
      const target = parts.length === 1 ? parts[0] : parts[1];
      return parts[2]?.split(',').includes('ro') ? [] : [target];
    }
    return (v as { read_only?: boolean }).read_only ? [] : [v.target];
  });
  const raw = (svc as { tmpfs?: string | string[] }).tmpfs;
  const tmpfs = (typeof raw === 'string' ? [raw] : raw ?? []).map((t) => t.split(':')[0]);
  return { writable, tmpfs };
}

// Each compose service that runs the image with a read-only root: the cache (its environment, else the image's) on
// a writable volume it mounts, not on a tmpfs.
export function composeCacheProblems(services: Readonly<Record<string, ComposeService>>, names: readonly string[], imageEnv: Readonly<Record<string, string>>): string[] {
  return names.flatMap((name) => {
    const svc = services[name];
    if (!svc) return [`compose: no service ${name}`];
    if ((svc as { read_only?: boolean }).read_only !== true) return [];
    const cache = svc.environment?.[cacheVar] ?? imageEnv[cacheVar];
    const bad = cachePathProblem(`compose ${name}`, cache);
    if (bad) return [bad];
    const { writable, tmpfs } = composeMounts(svc);
    if (tmpfs.some((t) => isUnder(cache, t))) return [`compose ${name}: ${cacheVar}=${cache} is on a tmpfs (noexec)`];
    return writable.some((t) => isUnder(cache, t)) ? [] : [`compose ${name}: ${cacheVar}=${cache} is on no writable volume (${writable.join(', ') || 'none'})`];
  });
}

// A k8s container of the image with a read-only root: the cache on a writable volumeMount; on an emptyDir or a PVC
// (ancestors others may write) with the ancestor check off.
export function k8sCacheProblems(where: string, container: IContainer, env: Readonly<Record<string, string>>, volumes: readonly IVolume[]): string[] {
  if (container.securityContext?.readOnlyRootFilesystem !== true) return [];
  const cache = env[cacheVar];
  if (!cache) return [`${where}: ${cacheVar} is not set (swc falls back to ~/.cache, read-only, and $TMPDIR)`];
  if (!cache.startsWith('/')) return [`${where}: ${cacheVar}=${cache} is not an absolute path`];
  const mount = (container.volumeMounts ?? []).filter((m) => isUnder(cache, m.mountPath)).sort((a, b) => b.mountPath.length - a.mountPath.length)[0];
  if (!mount) return [`${where}: ${cacheVar}=${cache} is on no mounted volume (the root is read-only)`];
  if (mount.readOnly) return [`${where}: ${cacheVar}=${cache} is on read-only mount ${mount.name}`];
  const volume = volumes.find((v) => v.name === mount.name);
  if ((volume?.emptyDir || volume?.persistentVolumeClaim) && env[skipCheckVar] !== '1') {
    return [`${where}: ${cacheVar}=${cache} is on ${volume.emptyDir ? 'an emptyDir (0777)' : 'a PVC (group-writable under fsGroup)'}, which swc refuses unless ${skipCheckVar}=1`];
  }
  return [];
}
