// docker-compose.yml as docker compose reads it: YAML with merge keys, then variable interpolation of every
// string (${VAR}, ${VAR:-default}, ${VAR-default}, ${VAR:?error}, ${VAR?error}, $VAR, $$ for a literal $).
import { parse } from 'yaml';
import { z } from 'zod';
import { readRepoFile } from './deploy-layout';

const stringMap = z.union([
  z.record(z.union([z.string(), z.number(), z.boolean(), z.null()])).transform((m) =>
    Object.fromEntries(Object.entries(m).map(([k, v]) => [k, v === null ? '' : String(v)])),
  ),
  z.array(z.string()).transform((list) =>
    Object.fromEntries(list.map((item) => {
      const eq = item.indexOf('=');
      return eq < 0 ? [item, ''] : [item.slice(0, eq), item.slice(eq + 1)];
    })),
  ),
]);

const healthcheckSchema = z.object({
  test: z.union([z.array(z.string()), z.string()]),
  interval: z.string().optional(),
  timeout: z.string().optional(),
  retries: z.number().optional(),
  start_period: z.string().optional(),
}).passthrough();

const dependsOnSchema = z.union([
  z.array(z.string()).transform((names) => Object.fromEntries(names.map((n) => [n, { condition: 'service_started' }]))),
  z.record(z.object({ condition: z.string().default('service_started') }).passthrough()),
]);

export const composeServiceSchema = z.object({
  image: z.string().optional(),
  build: z.union([z.string(), z.object({ context: z.string(), dockerfile: z.string().optional() }).passthrough()]).optional(),
  command: z.union([z.array(z.string()), z.string()]).optional(),
  entrypoint: z.union([z.array(z.string()), z.string()]).optional(),
  environment: stringMap.optional(),
  ports: z.array(z.union([z.string(), z.object({ target: z.number(), published: z.union([z.string(), z.number()]).optional(), host_ip: z.string().optional() }).passthrough()])).optional(),
  volumes: z.array(z.union([z.string(), z.object({ source: z.string().optional(), target: z.string() }).passthrough()])).optional(),
  depends_on: dependsOnSchema.optional(),
  healthcheck: healthcheckSchema.optional(),
  restart: z.string().optional(),
}).passthrough();

export const composeFileSchema = z.object({
  name: z.string().optional(),
  services: z.record(composeServiceSchema),
  volumes: z.record(z.union([z.null(), z.object({}).passthrough()])).optional(),
}).passthrough();

export type ComposeService = z.infer<typeof composeServiceSchema>;
export type ComposeFile = z.infer<typeof composeFileSchema>;

export type Interpolation = { name: string; modifier: '' | ':-' | '-' | ':?' | '?'; argument: string };

const varPattern = /\$(?:\$|\{([A-Za-z_][A-Za-z0-9_]*)(?:(:-|-|:\?|\?)([^}]*))?\}|([A-Za-z_][A-Za-z0-9_]*))/g;

// Every ${VAR...} reference in a string (skipping $$ escapes).
export function interpolationsIn(text: string): Interpolation[] {
  const found: Interpolation[] = [];
  for (const m of text.matchAll(varPattern)) {
    if (m[0] === '$$') continue;
    const name = m[1] ?? m[4];
    if (name) found.push({ name, modifier: (m[2] ?? '') as Interpolation['modifier'], argument: m[3] ?? '' });
  }
  return found;
}

// Compose interpolation of one string against `env`; a missing ${VAR:?msg} throws with msg.
export function interpolate(text: string, env: Readonly<Record<string, string>>): string {
  return text.replace(varPattern, (whole, braced: string | undefined, modifier: string | undefined, argument: string | undefined, bare: string | undefined) => {
    if (whole === '$$') return '$';
    const name = (braced ?? bare) as string;
    const value = env[name];
    switch (modifier) {
      case ':-': return value ? value : argument ?? '';
      case '-': return value !== undefined ? value : argument ?? '';
      case ':?': if (!value) throw new Error(`compose: required variable ${name} is missing a value: ${argument}`); return value;
      case '?': if (value === undefined) throw new Error(`compose: required variable ${name} is missing: ${argument}`); return value;
      default: return value ?? '';
    }
  });
}

function mapStrings(value: unknown, f: (s: string) => string): unknown {
  if (typeof value === 'string') return f(value);
  if (Array.isArray(value)) return value.map((v) => mapStrings(v, f));
  if (value && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, mapStrings(v, f)]));
  }
  return value;
}

// The compose file as YAML (merge keys resolved), before interpolation.
export function readComposeRaw(file = 'docker-compose.yml'): unknown {
  return parse(readRepoFile(file), { merge: true });
}

// The compose file as docker compose sees it once `env` (the .env file) is interpolated.
export function loadCompose(env: Readonly<Record<string, string>>, file = 'docker-compose.yml'): ComposeFile {
  return composeFileSchema.parse(mapStrings(readComposeRaw(file), (s) => interpolate(s, env)));
}

// KEY=VALUE lines of a .env file (comments and blank lines skipped).
export function parseDotEnv(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const line of text.split('\n')) {
    const t = line.trim();
    if (!t || t.startsWith('#')) continue;
    const eq = t.indexOf('=');
    if (eq > 0) out[t.slice(0, eq).trim()] = t.slice(eq + 1).trim();
  }
  return out;
}

// All string scalars of a parsed YAML value, with their path (for finding ${VAR} references).
export function stringsWithPaths(value: unknown, at = ''): Array<{ path: string; text: string }> {
  if (typeof value === 'string') return [{ path: at, text: value }];
  if (Array.isArray(value)) return value.flatMap((v, i) => stringsWithPaths(v, `${at}[${i}]`));
  if (value && typeof value === 'object') {
    return Object.entries(value).flatMap(([k, v]) => stringsWithPaths(v, at ? `${at}.${k}` : k));
  }
  return [];
}

// The command as an argv list (a string command is split on whitespace, as compose does without quotes).
export function argv(command: string[] | string | undefined): string[] {
  if (command === undefined) return [];
  return Array.isArray(command) ? command : command.trim().split(/\s+/);
}
