// Numeric --flags of a benchmark (node:util parseArgs); a mistake is one BenchUserError line naming the flag.
import { parseArgs } from 'node:util';

export class BenchUserError extends Error {
  override readonly name = 'BenchUserError';
}

export interface NumericFlag {
  default: number;
  min: number;
  max: number;
  integer?: boolean;
  help: string;
}

export function parseNumericFlags<K extends string>(bench: string, argv: string[], flags: Record<K, NumericFlag>): Record<K, number> {
  let values: Record<string, string | undefined>;
  try {
    ({ values } = parseArgs({
      args: argv,
      options: Object.fromEntries(Object.keys(flags).map((k) => [k, { type: 'string' as const }])),
      strict: true,
      allowPositionals: false,
    }) as { values: Record<string, string | undefined> });
  } catch (err) {
    throw new BenchUserError(`${bench}: ${(err as Error).message.split('\n')[0]}; flags: ${usage(flags)}`);
  }
  const out = {} as Record<K, number>;
  for (const k of Object.keys(flags) as K[]) {
    const f = flags[k];
    const raw = values[k];
    const v = raw === undefined ? f.default : Number(raw);
    const bad = !Number.isFinite(v) || v < f.min || v > f.max || (f.integer !== false && !Number.isInteger(v));
    if (bad) throw new BenchUserError(`${bench}: --${k} must be ${f.integer !== false ? 'an integer' : 'a number'} in [${f.min}, ${f.max}] (got '${raw}')`);
    out[k] = v;
  }
  return out;
}

export function usage(flags: Record<string, NumericFlag>): string {
  return Object.entries(flags)
    .map(([k, f]) => `--${k} <${f.help}, default ${f.default}>`)
    .join(' ');
}
