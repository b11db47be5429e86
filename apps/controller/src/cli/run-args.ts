// The flags of `rx run`, parsed with node:util parseArgs; a mistake is one RunUserError line with the usage.
import { parseArgs } from 'node:util';
import { RunUserError, type BackendKind, type ServicesMode } from '../experiment/run-options';

export const RUN_USAGE =
  'usage: rx run --spec <spec.json> [--backend embedded|tinker] [--services spawn|external] [--out <dir>] [--override <json-file>] [--port <n>|off] | rx run --resume <dir>';

export interface RunArgs {
  specPath?: string;
  outDir?: string;
  resumeDir?: string;
  overridePath?: string;
  backend?: BackendKind;
  services: ServicesMode;
  /** undefined: PORT from the environment; null: no HTTP server */
  httpPort?: number | null;
  /** hidden: the model a spawned policy server serves (tests use the in-memory test model) */
  policyBackend?: 'embedded' | 'memory' | 'hash-chain';
}

export function parseRunArgs(argv: string[]): RunArgs {
  let values: Record<string, string | undefined>;
  try {
    ({ values } = parseArgs({
      args: argv,
      options: {
        spec: { type: 'string' },
        backend: { type: 'string' },
        services: { type: 'string' },
        out: { type: 'string' },
        resume: { type: 'string' },
        override: { type: 'string' },
        port: { type: 'string' },
        'policy-backend': { type: 'string' },
      },
      strict: true,
      allowPositionals: false,
    }) as { values: Record<string, string | undefined> });
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
    policyBackend: oneOf('policy-backend', ['embedded', 'memory', 'hash-chain'] as const),
  };
  if (values.port !== undefined) {
    if (values.port === 'off') args.httpPort = null;
    else if (/^\d+$/.test(values.port) && Number(values.port) <= 65535) args.httpPort = Number(values.port);
    else throw new RunUserError(`--port must be a port number (0 for any free one) or 'off', got '${values.port}'`);
  }
  if (args.resumeDir && args.outDir) throw new RunUserError(`--resume continues a run in its own directory; drop --out (${RUN_USAGE})`);
  if (!args.resumeDir && !args.specPath) throw new RunUserError(`--spec is required; ${RUN_USAGE}`);
  return args;
}
