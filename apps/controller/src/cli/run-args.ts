// The flags of `rx run`, parsed with node:util parseArgs; a mistake is one RunUserError line with the usage.
import { parseArgs } from 'node:util';
import { RunUserError, type BackendKind, type ServicesMode } from '../composition/run-options';

export const RUN_USAGE =
  'usage: rx run --spec <spec.json> [--backend embedded|tinker] [--services spawn|external] [--out <dir>] [--override <json-file>] [--port <n>|off] | rx run --resume <dir> [--accept-changes]';

export interface RunArgs {
  specPath?: string;
  outDir?: string;
  resumeDir?: string;
  overridePath?: string;
  backend?: BackendKind;
  services: ServicesMode;
  /** undefined: PORT from the environment; null: no HTTP server */
  httpPort?: number | null;
  /** resume although the spec, effective configuration or code changed (recorded as a revision) */
  acceptChanges?: boolean;
}

/** `--port -1`: parseArgs would take `-1` for an option of its own and lose the hint; a value it is, checked below */
function joinNegativeValues(argv: string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === '--port' && i + 1 < argv.length && /^-\d/.test(argv[i + 1])) {
      out.push(`--port=${argv[i + 1]}`);
      i++;
    } else out.push(argv[i]);
  }
  return out;
}

export function parseRunArgs(argv: string[]): RunArgs {
  let values: Record<string, string | undefined>;
  try {
    ({ values } = parseArgs({
      args: joinNegativeValues(argv),
      options: {
        spec: { type: 'string' },
        backend: { type: 'string' },
        services: { type: 'string' },
        out: { type: 'string' },
        resume: { type: 'string' },
        override: { type: 'string' },
        port: { type: 'string' },
        'accept-changes': { type: 'boolean' },
      },
      strict: true,
      allowPositionals: false,
    }) as unknown as { values: Record<string, string | undefined> });
  } catch (err) {
    throw new RunUserError(`${(err as Error).message.split('\n')[0].replace(/\.$/, '')}; ${RUN_USAGE}`);
  }
  const oneOf = <T extends string>(flag: string, allowed: readonly T[]): T | undefined => {
    const v = values[flag];
    if (v === undefined) return undefined;
    if (!(allowed as readonly string[]).includes(v)) throw new RunUserError(`--${flag} must be ${allowed.join(' or ')}, got '${v}'`);
    return v as T;
  };
  const args: RunArgs = {
    specPath: values.spec,
    outDir: values.out,
    resumeDir: values.resume,
    overridePath: values.override,
    backend: oneOf('backend', ['embedded', 'tinker'] as const),
    services: oneOf('services', ['spawn', 'external'] as const) ?? 'spawn',
  };
  // a boolean flag: parseArgs gives true
  if ((values as Record<string, unknown>)['accept-changes'] === true) args.acceptChanges = true;
  if (values.port !== undefined) {
    if (values.port === 'off') args.httpPort = null;
    else if (/^\d+$/.test(values.port) && Number(values.port) <= 65535) args.httpPort = Number(values.port);
    else throw new RunUserError(`--port must be a port number (0 for any free one) or 'off', got '${values.port}'`);
  }
  if (args.acceptChanges && !args.resumeDir) throw new RunUserError(`--accept-changes is for --resume (a run whose spec or code changed since it started); ${RUN_USAGE}`);
  if (args.resumeDir && args.outDir) throw new RunUserError(`--resume continues a run in its own directory; drop --out (${RUN_USAGE})`);
  if (!args.resumeDir && !args.specPath) throw new RunUserError(`--spec is required; ${RUN_USAGE}`);
  return args;
}
