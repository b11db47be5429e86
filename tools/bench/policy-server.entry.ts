// The policy server as a benchmark child process: apps/policy-server's startPolicyServer with its own
// configuration (PORT, RX_DATA_DIR, RX_POLICY_LATENCY_MS, ...), serving either the EmbeddedBackend on a base
// checkpoint the benchmark chose (RX_BENCH_BASE_CHECKPOINT; main.ts always loads models/char-lm) or the
// in-memory bigram under the embedded model's name and vocabulary, so the pipeline's char renderer applies.
// Logs one JSON line {"event":"ready","url":...} when listening; SIGTERM closes it.
import 'reflect-metadata';
import { CHAR_VOCAB_SIZE, type PolicyBackend } from '@rx/backend';
import { InMemoryPolicyBackend } from '@rx/backend/testing';
import { EMBEDDED_BASE_MODEL, EmbeddedBackend } from '@rx/embedded-model';
import * as path from 'node:path';
import { z } from 'zod';
import { parsePolicyServerConfig, startPolicyServer } from '@rx/policy-server';

const benchEnvSchema = z.object({
  RX_BENCH_POLICY: z.enum(['embedded', 'memory']),
  RX_BENCH_BASE_CHECKPOINT: z.string().min(1).optional(),
});

async function main(): Promise<void> {
  const env = benchEnvSchema.parse(process.env);
  const config = parsePolicyServerConfig({ ...process.env, PORT: process.env.PORT ?? '0' });
  let backend: PolicyBackend;
  if (env.RX_BENCH_POLICY === 'embedded') {
    if (!env.RX_BENCH_BASE_CHECKPOINT) throw new Error('RX_BENCH_BASE_CHECKPOINT is required with RX_BENCH_POLICY=embedded');
    const embedded = new EmbeddedBackend({ dataDir: path.join(config.dataDir, 'embedded'), baseCheckpoint: env.RX_BENCH_BASE_CHECKPOINT });
    await embedded.loadBase();
    backend = embedded;
  } else {
    backend = new InMemoryPolicyBackend({ baseModels: [EMBEDDED_BASE_MODEL], vocabSize: CHAR_VOCAB_SIZE });
  }
  const server = await startPolicyServer(config, backend, { logger: false });
  process.stdout.write(JSON.stringify({ event: 'ready', url: server.url, backend: env.RX_BENCH_POLICY, latencyMs: config.latencyMs }) + '\n');
  await new Promise<void>((resolve) => {
    process.once('SIGTERM', () => resolve());
    process.once('SIGINT', () => resolve());
  });
  await server.close();
  await backend.close();
}

main().catch((err: unknown) => {
  process.stderr.write(`bench policy server: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exitCode = 1;
});
