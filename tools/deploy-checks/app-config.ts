// An app's env config schema (apps/<app>/src/config.ts exports a zod object schema, named `<app>ConfigSchema`,
// `<app>EnvSchema` or `configSchema`), found by loading the module, and what it declares: keys, required, defaults.
import * as fs from 'node:fs';
import { z } from 'zod';
import { repoPath } from './deploy-layout';

export type AppConfig = {
  app: string;
  exportName: string;
  schema: z.ZodTypeAny;
  shape: Record<string, z.ZodTypeAny>;
};

function camel(app: string): string {
  return app.replace(/-([a-z])/g, (_, c: string) => c.toUpperCase());
}

// The object schema under transforms/refinements/pipes, or undefined when there is none.
function objectOf(schema: z.ZodTypeAny): z.AnyZodObject | undefined {
  let s: z.ZodTypeAny = schema;
  for (let i = 0; i < 10; i++) {
    if (s instanceof z.ZodObject) return s;
    if (s instanceof z.ZodEffects) s = s.innerType();
    else if (s instanceof z.ZodPipeline) s = s._def.in;
    else if (s instanceof z.ZodBranded) s = s.unwrap();
    else if (s instanceof z.ZodReadonly) s = s._def.innerType;
    else return undefined;
  }
  return undefined;
}

export function configModulePath(app: string): string {
  return repoPath('apps', app, 'src', 'config.ts');
}

export function hasConfigModule(app: string): boolean {
  return fs.existsSync(configModulePath(app));
}

export function loadAppConfig(app: string): AppConfig {
  const file = configModulePath(app);
  if (!fs.existsSync(file)) throw new Error(`apps/${app}/src/config.ts does not exist`);
  const mod = require(file) as Record<string, unknown>;
  const candidates = Object.entries(mod).flatMap(([name, value]) => {
    if (!(value instanceof z.ZodType)) return [];
    const obj = objectOf(value);
    return obj ? [{ name, schema: value as z.ZodTypeAny, obj }] : [];
  });
  const preferred = [`${camel(app)}ConfigSchema`, `${camel(app)}EnvSchema`, 'configSchema', 'envSchema'];
  const named = candidates.filter((c) => /(Config|Env)Schema$/i.test(c.name));
  const chosen =
    candidates.find((c) => preferred.includes(c.name)) ??
    (named.length === 1 ? named[0] : undefined) ??
    (candidates.length === 1 ? candidates[0] : undefined);
  if (!chosen) {
    throw new Error(
      `apps/${app}/src/config.ts: expected one exported zod object schema named ${preferred.join(' or ')}; found ${candidates.map((c) => c.name).join(', ') || 'none'}`,
    );
  }
  return { app, exportName: chosen.name, schema: chosen.schema, shape: chosen.obj.shape as Record<string, z.ZodTypeAny> };
}

// Keys the service cannot start without (no default, not optional).
export function requiredKeys(config: AppConfig): string[] {
  return Object.entries(config.shape).filter(([, s]) => !s.safeParse(undefined).success).map(([k]) => k);
}

// The default a key takes when unset, if it has one.
export function defaultOf(config: AppConfig, key: string): unknown {
  const s = config.shape[key];
  if (!s) return undefined;
  const r = s.safeParse(undefined);
  return r.success ? r.data : undefined;
}

export function describeIssues(error: z.ZodError): string {
  return error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`).join('; ');
}
