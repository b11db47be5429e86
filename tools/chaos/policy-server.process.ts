// The policy server of the chaos runs, as its own process: the server code of apps/policy-server
// (startPolicyServer, configured from the same environment as its main.ts) over the model the chaos tool
// chooses (CHAOS_MODEL):
//   hash-chain  the pipeline's deterministic test policy (libs/pipeline HashChainPolicyBackend): its weights and
//               optimizer step count live in the paths it hands out, so a SIGKILLed server restarted on the same
//               data directory resolves every path saved before (tinker-paths.json), as the embedded model does
//   embedded    the embedded transformer (@rx/embedded-model) on the base checkpoint CHAOS_BASE_CHECKPOINT
// Prints one JSON line {"event":"ready","url":...} when it listens; SIGTERM closes it.
import 'reflect-metadata';
import type { PolicyBackend } from '@rx/backend';
import { EmbeddedBackend } from '@rx/embedded-model';
import { HashChainPolicyBackend } from '@rx/backend/testing';
import { z } from 'zod';
import { parsePolicyServerConfig, startPolicyServer } from '@rx/policy-server';

const chaosEnvSchema = z.discriminatedUnion('CHAOS_MODEL', [
  z.object({ CHAOS_MODEL: z.literal('hash-chain') }),
  z.object({ CHAOS_MODEL: z.literal('embedded'), CHAOS_BASE_CHECKPOINT: z.string().min(1) }),
]);

async function main(): Promise<void> {
  const config = parsePolicyServerConfig(process.env);
  const chaos = chaosEnvSchema.parse(process.env);
  const backend: PolicyBackend =
    chaos.CHAOS_MODEL === 'embedded' ? new EmbeddedBackend({ dataDir: config.dataDir, baseCheckpoint: chaos.CHAOS_BASE_CHECKPOINT }) : new HashChainPolicyBackend();
  const server = await startPolicyServer(config, backend, { logger: ['error', 'warn'] });
  process.stdout.write(JSON.stringify({ at: new Date().toISOString(), service: 'policy-server', event: 'ready', url: server.url, model: chaos.CHAOS_MODEL }) + '\n');
  await new Promise<void>((resolve) => {
    process.once('SIGTERM', () => resolve());
    process.once('SIGINT', () => resolve());
  });
  await server.close();
  await backend.close();
  process.stdout.write(JSON.stringify({ at: new Date().toISOString(), service: 'policy-server', event: 'closed' }) + '\n');
}

main().catch((err: unknown) => {
  process.stderr.write(`policy-server (chaos): ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
