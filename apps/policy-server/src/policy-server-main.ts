// The policy server's process: the Tinker protocol subset over the embedded model (main.ts), or over a test double
// (testing/memory.main.ts), on 127.0.0.1:8000 unless HOST/PORT say otherwise. Bad configuration: one line, exit 2.
// SIGTERM/SIGINT: graceful.
import type { PolicyBackend } from '@rx/backend';
import { PolicyServerConfigError, parsePolicyServerConfig, type PolicyServerConfig } from './config';
import { startPolicyServer } from './policy-server';

async function main(backendFor: (config: PolicyServerConfig) => Promise<PolicyBackend>): Promise<number> {
  const config = parsePolicyServerConfig(process.env);
  const log = (m: string): void => {
    process.stdout.write(`policy-server: ${m}\n`);
  };
  const backend = await backendFor(config);
  const server = await startPolicyServer(config, backend);
  log(`serving the ${backend.kind} backend at ${server.url}, data in ${config.dataDir}`);
  if (!config.apiKey) log('RX_POLICY_API_KEY is not set: any process on this machine can drive the models (set it on a shared machine)');
  await new Promise<void>((resolve) => {
    const stop = (signal: string): void => {
      log(`${signal}: finishing running work (up to ${config.shutdownGraceMs} ms), then closing`);
      resolve();
    };
    process.once('SIGTERM', () => stop('SIGTERM'));
    process.once('SIGINT', () => stop('SIGINT'));
  });
  await server.close();
  await backend.close();
  log('closed');
  return 0;
}

/** the policy server's process over the backend `backendFor` builds (main.ts: the embedded model) */
export function policyServerMain(backendFor: (config: PolicyServerConfig) => Promise<PolicyBackend>): void {
  main(backendFor).then(
    (code) => {
      process.exitCode = code;
    },
    (err: unknown) => {
      if (err instanceof PolicyServerConfigError) {
        process.stderr.write(`policy-server: ${err.message}\n`);
        process.exitCode = 2;
        return;
      }
      const code = (err as { code?: unknown })?.code;
      if (code === 'EADDRINUSE' || code === 'EACCES' || code === 'EADDRNOTAVAIL') {
        process.stderr.write(`policy-server: cannot listen (${String(code)}): ${(err as Error).message}; set HOST/PORT\n`);
        process.exitCode = 2;
        return;
      }
      process.stderr.write(`policy-server: internal error: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
      process.exitCode = 1;
    },
  );
}
