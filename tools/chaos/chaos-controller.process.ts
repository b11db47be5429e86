// The chaos run's controller as its own process (so the chaos tool can SIGKILL and restart it): the secrets
// come from the environment (REDIS_URL, TINKER_API_KEY), never from a file or the command line.
// Exit 0 with result.json written; 1 with one line on stderr when the run cannot complete.
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { backendFromConfig, insecureRedisProblem } from '@rx/service-host';
import { loadSpecText } from '@rx/spec';
import { z } from 'zod';
import { runChaosController } from './chaos-controller';
import { REPO_ROOT } from './service-process';

const int = (min: number) => z.coerce.number().int().min(min);

const envSchema = z.object({
  REDIS_URL: z.string().url(),
  RX_BACKEND_URL: z.string().url(),
  TINKER_API_KEY: z.string().min(1).optional(),
  RX_QUEUE_PREFIX: z.string().regex(/^[A-Za-z0-9_.-]{1,64}$/),
  CHAOS_RUN_ID: z.string().regex(/^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/),
  CHAOS_OUT: z.string().min(1),
  CHAOS_SPEC: z.string().min(1).default(path.join(REPO_ROOT, 'specs', 'embedded.json')),
  CHAOS_STEPS: int(1),
  CHAOS_EVAL_ITEMS: int(1),
  CHAOS_BANDWIDTH: z.coerce.number().positive().default(0.5),
  CHAOS_CONCURRENCY: int(1).default(16),
  CHAOS_STEP_TIMEOUT_MS: int(1000).default(120_000),
  CHAOS_HOLD_FILE: z.string().min(1).optional(),
  /** the base model the backend serves, when the spec names it otherwise (the embedded model is 'rx/char-lm') */
  CHAOS_BASE_MODEL: z.string().min(1).optional(),
});

async function main(): Promise<number> {
  const env = envSchema.parse(process.env);
  const insecure = insecureRedisProblem(process.env);
  if (insecure) throw new Error(insecure);
  const parsed = loadSpecText(readFileSync(env.CHAOS_SPEC, 'utf8'));
  if (!parsed.ok) throw new Error(`${env.CHAOS_SPEC}: ${parsed.errors[0]}`);
  const backend = backendFromConfig({ RX_BACKEND_URL: env.RX_BACKEND_URL, TINKER_API_KEY: env.TINKER_API_KEY });
  const log = (event: string, fields: Record<string, unknown> = {}) =>
    process.stdout.write(JSON.stringify({ at: new Date().toISOString(), service: 'chaos-controller', event, ...fields }) + '\n');
  try {
    await runChaosController({
      redisUrl: env.REDIS_URL,
      prefix: env.RX_QUEUE_PREFIX,
      backend,
      spec: env.CHAOS_BASE_MODEL ? { ...parsed.spec, base_model: env.CHAOS_BASE_MODEL } : parsed.spec,
      runId: env.CHAOS_RUN_ID,
      outDir: env.CHAOS_OUT,
      steps: env.CHAOS_STEPS,
      evalItems: env.CHAOS_EVAL_ITEMS,
      bandwidth: env.CHAOS_BANDWIDTH,
      concurrency: env.CHAOS_CONCURRENCY,
      stepTimeoutMs: env.CHAOS_STEP_TIMEOUT_MS,
      holdUntilFile: env.CHAOS_HOLD_FILE,
      log,
    });
    return 0;
  } finally {
    await backend.close();
  }
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write(`chaos-controller: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(1);
  },
);
