// How many cases each fuzz property runs and with which seed, from the environment (validated once with zod):
// RX_FUZZ_RUNS is the case count of a standard in-process property (default 1000); every property states its
// count as a multiple of it, so one variable raises (or lowers) the whole suite. RX_FUZZ_SEED replays a run.
import type { Parameters } from 'fast-check';
import { z } from 'zod';

const intVar = (name: string, min: number) =>
  z
    .string()
    .regex(/^\d+$/, `${name} must be an integer >= ${min}`)
    .transform(Number)
    .pipe(z.number().int().min(min, `${name} must be an integer >= ${min}`).max(Number.MAX_SAFE_INTEGER));

// fast-check prints 32-bit seeds, negative ones included: RX_FUZZ_SEED takes them as printed
const seedVar = z
  .string()
  .regex(/^-?\d+$/, 'RX_FUZZ_SEED must be an integer (as a failure prints it)')
  .transform(Number)
  .pipe(z.number().int().min(-(2 ** 31), 'RX_FUZZ_SEED must fit in 32 bits').max(2 ** 32 - 1, 'RX_FUZZ_SEED must fit in 32 bits'));

const fuzzEnvSchema = z.object({
  RX_FUZZ_RUNS: intVar('RX_FUZZ_RUNS', 1).default('1000'),
  RX_FUZZ_SEED: seedVar.optional(),
  // with RX_FUZZ_SEED, the path a failure prints: replays that one case (and its shrinking) only
  RX_FUZZ_PATH: z.string().regex(/^\d+(:\d+)*$/, 'RX_FUZZ_PATH must be a fast-check path such as 117:10:2').optional(),
});

export type FuzzEnv = z.infer<typeof fuzzEnvSchema>;

export function parseFuzzEnv(env: Record<string, string | undefined>): FuzzEnv {
  const parsed = fuzzEnvSchema.safeParse({
    RX_FUZZ_RUNS: env.RX_FUZZ_RUNS || undefined,
    RX_FUZZ_SEED: env.RX_FUZZ_SEED || undefined,
    RX_FUZZ_PATH: env.RX_FUZZ_PATH || undefined,
  });
  if (parsed.success && parsed.data.RX_FUZZ_PATH !== undefined && parsed.data.RX_FUZZ_SEED === undefined) {
    throw new Error('fuzz configuration: RX_FUZZ_PATH replays a case only together with the RX_FUZZ_SEED it was printed with');
  }
  if (!parsed.success) throw new Error(`fuzz configuration: ${parsed.error.issues.map((i) => i.message).join('; ')}`);
  return parsed.data;
}

const FUZZ_ENV = parseFuzzEnv(process.env);

/**
 * The seed of the fc.sample draws (the batches of CLI runs and HTTP requests): RX_FUZZ_SEED, or one drawn per
 * test file; the tests print it with a failure so it can be replayed.
 */
export const SAMPLE_SEED = FUZZ_ENV.RX_FUZZ_SEED ?? Math.floor(Math.random() * 2 ** 31);

/** The standard case count (RX_FUZZ_RUNS, default 1000). */
export const STANDARD_RUNS = FUZZ_ENV.RX_FUZZ_RUNS;

// cases = max(1, round(share * RX_FUZZ_RUNS))
export function fuzzRuns(share: number): number {
  return Math.max(1, Math.round(share * STANDARD_RUNS));
}

/** A test timeout that grows with RX_FUZZ_RUNS (the default run gets `baseMs`). */
export function fuzzTimeoutMs(baseMs: number): number {
  return Math.round(baseMs * Math.max(1, STANDARD_RUNS / 1000));
}

/** fast-check parameters for a property that runs `share` x the standard case count. */
export function fuzzParams<T>(share: number): Parameters<T> {
  return {
    numRuns: fuzzRuns(share),
    ...(FUZZ_ENV.RX_FUZZ_SEED !== undefined ? { seed: FUZZ_ENV.RX_FUZZ_SEED } : {}),
    ...(FUZZ_ENV.RX_FUZZ_PATH !== undefined ? { path: FUZZ_ENV.RX_FUZZ_PATH } : {}),
    // a failure prints its seed and path; the shrunk counterexample is enough, not every intermediate step
    verbose: 0,
  };
}

/**
 * Runs `fn` and returns its result with the CPU milliseconds it took (user + system of this process), which,
 * unlike the wall clock, other processes on a loaded machine do not inflate.
 */
export function withCpuTime<T>(fn: () => T): { value: T; cpuMs: number } {
  const start = process.cpuUsage();
  const value = fn();
  const used = process.cpuUsage(start);
  return { value, cpuMs: (used.user + used.system) / 1000 };
}

/** Like withCpuTime, but a throw is caught and returned as `error`. */
export function tryWithCpuTime<T>(fn: () => T): { value?: T; error?: unknown; cpuMs: number } {
  const start = process.cpuUsage();
  let value: T | undefined;
  let error: unknown;
  let threw = false;
  try {
    value = fn();
  } catch (err) {
    threw = true;
    error = err;
  }
  const used = process.cpuUsage(start);
  const cpuMs = (used.user + used.system) / 1000;
  return threw ? { error, cpuMs } : { value, cpuMs };
}
