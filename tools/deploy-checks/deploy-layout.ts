// The deployment layout the checks hold compose, k8s, Prometheus and the services' config schemas to: one image,
// one app per service, each on its fixed port. The files are cross-checked against this table and against each other.
import * as fs from 'node:fs';
import * as path from 'node:path';

export const repoRoot = path.resolve(__dirname, '..', '..');

export type RxService = { app: string; port: number };

// The services and their ports (the conventions every app's config.ts default, compose and k8s must agree on).
export const rxServices: readonly RxService[] = [
  { app: 'policy-server', port: 8000 },
  { app: 'sampler', port: 3101 },
  { app: 'grader', port: 3102 },
  { app: 'advantage', port: 3103 },
  { app: 'trainer', port: 3104 },
  { app: 'controller', port: 3100 },
];

// Env vars a container may set that no app's config schema reads: the image's role switch, in k8s the Redis
// password that REDIS_URL is composed from ($(REDIS_PASSWORD)), and where @swc/core unpacks its native addon.
export const infraEnvVars: ReadonlySet<string> = new Set([
  'RX_ROLE', 'REDIS_PASSWORD', 'NODE_ENV', 'NODE_OPTIONS', 'SWC_NATIVE_BINDING_CACHE', 'SWC_NATIVE_BINDING_CACHE_SKIP_SECURITY_CHECK',
]);

// Env vars an app reads directly from process.env, outside its config schema (each one a candidate for the schema).
export const readOutsideSchema: Readonly<Record<string, readonly string[]>> = {
  controller: ['RX_GSM8K_DIR'],
};

export function repoPath(...parts: string[]): string {
  return path.join(repoRoot, ...parts);
}

export function readRepoFile(...parts: string[]): string {
  return fs.readFileSync(repoPath(...parts), 'utf8');
}

// Apps that can be started: apps/<name>/src/main.ts exists.
export function runnableApps(): string[] {
  return fs
    .readdirSync(repoPath('apps'), { withFileTypes: true })
    .filter((d) => d.isDirectory() && fs.existsSync(repoPath('apps', d.name, 'src', 'main.ts')))
    .map((d) => d.name)
    .sort();
}

export function serviceFor(app: string): RxService {
  const found = rxServices.find((s) => s.app === app);
  if (!found) throw new Error(`'${app}' is not an rx service (known: ${rxServices.map((s) => s.app).join(', ')})`);
  return found;
}
