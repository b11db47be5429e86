// The CI step that runs docker compose for real (.ci/compose-stack.sh) against the files it stands in for: it builds
// a stand-in under every image name the stack pulls (no registry there), and its compose override only moves Grafana
// to a profile. A stand-in missing after a version bump fails the step too, but only after its downloads.
import { parse } from 'yaml';
import { z } from 'zod';
import { loadCompose } from './compose-file';
import { readRepoFile } from './deploy-layout';
import { parseDockerfile } from './dockerfile-parse';

const dotEnv = { REDIS_PASSWORD: 'fake-redis-password-0123', GRAFANA_ADMIN_PASSWORD: 'fake-grafana-password', RX_POLICY_API_KEY: 'fake-policy-api-key-0123' };
const script = readRepoFile('.ci', 'compose-stack.sh');

// `build_stand_in <name> <file> <context>` lines of the script
function standInNames(text: string): string[] {
  return [...text.matchAll(/^\s*build_stand_in\s+(\S+)\s+\S+\.Dockerfile\b/gm)].map((m) => m[1]);
}

describe('.ci/compose-stack.sh', () => {
  const { services } = loadCompose(dotEnv);
  const override = z.object({ services: z.record(z.record(z.unknown())) }).strict().parse(parse(readRepoFile('.ci', 'compose-stack', 'compose.ci.yml')));
  const left = Object.entries(override.services).filter(([, svc]) => Array.isArray(svc.profiles) && svc.profiles.length > 0).map(([name]) => name);

  it('its override only gives Grafana a profile (nothing else in the stack changes)', () => {
    expect(override.services).toEqual({ grafana: { profiles: ['grafana'] } });
  });

  it('builds a stand-in under every image the stack and the Dockerfile use, but its own', () => {
    const { globalArgs } = parseDockerfile(readRepoFile('Dockerfile'));
    const pulled = new Set([
      ...Object.entries(services).filter(([name, svc]) => !left.includes(name) && svc.image && !svc.build).map(([, svc]) => svc.image as string),
      globalArgs.NODE_IMAGE,
    ]);
    const built = standInNames(script);
    expect([...pulled].filter((image) => !built.includes(image))).toEqual([]);
    // and the reader finds what is missing
    expect(standInNames(script.replace(/^\s*build_stand_in redis:\S+ .*$/m, ''))).not.toContain(services.redis.image);
  });

  it('imports the debootstrapped root under the base the stand-ins are built FROM', () => {
    const bases = ['node', 'redis', 'prometheus'].map((f) => parseDockerfile(readRepoFile('.ci', 'compose-stack', `${f}.Dockerfile`)).stages[0].base);
    const imported = /docker import - (\S+)/.exec(script)?.[1];
    expect(new Set(bases)).toEqual(new Set([imported]));
  });
});
