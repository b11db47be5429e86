// @swc/core's native addon cache (SWC_NATIVE_BINDING_CACHE) in the image, compose and every k8s overlay: writable,
// exec-able and acceptable to swc under a read-only root (without it every rx container dies with
// ERR_SWC_NATIVE_CACHE; the compose CI step, .ci/compose-stack.sh, sees that for real). Each check is also run with
// the setting taken out or moved, where it must fail.
import type { IContainer } from 'kubernetes-models/v1/Container';
import { loadCompose } from './compose-file';
import { readRepoFile, rxServices } from './deploy-layout';
import { parseDockerfile, stageEnv, stageVolumes } from './dockerfile-parse';
import { containerEnv, allContainersOf, kubectlVersion, KubeObject, overlays, renderOverlay, workloads } from './kustomize-render';
import { cacheVar, composeCacheProblems, imageCacheProblems, k8sCacheProblems, skipCheckVar } from './swc-native-cache';

const { stages } = parseDockerfile(readRepoFile('Dockerfile'));
const runtime = stages[stages.length - 1];
const imageEnv = stageEnv(runtime);
const imageVolumes = stageVolumes(runtime);
const dotEnv = { REDIS_PASSWORD: 'fake-redis-password-0123', GRAFANA_ADMIN_PASSWORD: 'fake-grafana-password', RX_POLICY_API_KEY: 'fake-policy-api-key-0123' };
const rxNames = rxServices.map((s) => s.app);
const without = (env: Readonly<Record<string, string>>, key: string): Record<string, string> => Object.fromEntries(Object.entries(env).filter(([k]) => k !== key));

describe('swc native addon cache: the image', () => {
  it('sets SWC_NATIVE_BINDING_CACHE in the runtime ENV, on a VOLUME, not under /tmp', () => {
    expect(imageCacheProblems(imageEnv, imageVolumes)).toEqual([]);
  });

  it('fails without the setting, on /tmp, or off every VOLUME', () => {
    expect(imageCacheProblems(without(imageEnv, cacheVar), imageVolumes).join()).toMatch(/not set/);
    expect(imageCacheProblems({ ...imageEnv, [cacheVar]: '/tmp/swc' }, imageVolumes).join()).toMatch(/noexec/);
    expect(imageCacheProblems(imageEnv, []).join()).toMatch(/on no VOLUME/);
  });
});

describe('swc native addon cache: docker-compose.yml', () => {
  const { services } = loadCompose(dotEnv);

  it('puts the cache of every read-only rx service on a writable volume it mounts', () => {
    expect(rxNames.filter((n) => (services[n] as { read_only?: boolean }).read_only === true)).toEqual(rxNames);
    expect(composeCacheProblems(services, rxNames, imageEnv)).toEqual([]);
  });

  it('fails when the image sets none, when the data volume is gone, or when the cache is on the tmpfs', () => {
    expect(composeCacheProblems(services, rxNames, without(imageEnv, cacheVar))).toHaveLength(rxNames.length);
    const noVolume = { ...services, sampler: { ...services.sampler, volumes: [] } };
    expect(composeCacheProblems(noVolume, rxNames, imageEnv).join()).toMatch(/compose sampler: .* on no writable volume/);
    const readOnlyVolume = { ...services, grader: { ...services.grader, volumes: ['rx-data:/data:ro'] } };
    expect(composeCacheProblems(readOnlyVolume, rxNames, imageEnv).join()).toMatch(/compose grader: .* on no writable volume/);
    const onTmpfs = { ...services, trainer: { ...services.trainer, tmpfs: ['/data'] } };
    expect(composeCacheProblems(onTmpfs, rxNames, imageEnv).join()).toMatch(/compose trainer: .* tmpfs/);
  });
});

const kubectl = kubectlVersion();
const describeWithKubectl = kubectl ? describe : describe.skip;
const isRxImage = (c: IContainer): boolean => /^(?:[^/]+\/)*rx(?::[^/]+)?$/.test(c.image ?? '');

describeWithKubectl('swc native addon cache: k8s overlays', () => {
  const rendered = new Map<string, KubeObject[]>();
  const objectsOf = (o: (typeof overlays)[number]): KubeObject[] => {
    if (!rendered.has(o)) rendered.set(o, renderOverlay(o));
    return rendered.get(o) as KubeObject[];
  };
  const problemsOf = (objects: KubeObject[], edit: (env: Record<string, string>) => Record<string, string> = (e) => e): string[] =>
    workloads(objects).flatMap((w) => allContainersOf(w).filter(isRxImage).flatMap((c) => {
      const { env } = containerEnv(c, objects, (secret, key) => `fake-${secret}-${key}`);
      return k8sCacheProblems(`${w.name}/${c.name}`, c, edit({ ...imageEnv, ...env }), w.template.spec?.volumes ?? []);
    }));

  it.each(overlays)('%s: every container of the image (init containers too) has a cache swc accepts on a writable mount', (overlay) => {
    const objects = objectsOf(overlay);
    const checked = workloads(objects).flatMap((w) => allContainersOf(w).filter(isRxImage));
    expect(checked.length).toBeGreaterThanOrEqual(5);
    expect(checked.every((c) => c.securityContext?.readOnlyRootFilesystem === true)).toBe(true);
    expect(problemsOf(objects)).toEqual([]);
  });

  it.each(overlays)('%s: fails with the image default (/data, a PVC) or with the ancestor check left on', (overlay) => {
    const objects = objectsOf(overlay);
    const count = workloads(objects).flatMap((w) => allContainersOf(w).filter(isRxImage)).length;
    expect(problemsOf(objects, (env) => ({ ...without(env, skipCheckVar), [cacheVar]: imageEnv[cacheVar] }))).toHaveLength(count);
    expect(problemsOf(objects, (env) => without(env, skipCheckVar)).join()).toMatch(/emptyDir/);
    expect(problemsOf(objects, (env) => ({ ...env, [cacheVar]: '/home/node/.cache/swc' }))).toHaveLength(count);
  });
});
