// The body of every service's main.ts: validate the environment (a bad value: one line, exit 1), connect the
// backend where the service calls one, start the service with SIGTERM handling; a start-up failure is one line and
// exit 1, never a stack.
import type { LoggerService, LogLevel } from '@nestjs/common';
import type { PolicyBackend } from '@rx/backend';
import type { StageName } from '@rx/contracts';
import { backendFromConfig } from './backend-from-config';
import { ConfigError, type BackendServiceConfig, type ServiceConfig } from './service-config';
import type { RunningService } from './bootstrap-service';

/** What an app's start function (startGrader, startAdvantage) takes. */
export interface ServiceStartOptions<C extends ServiceConfig = ServiceConfig> {
  config: C;
  installSignalHandlers?: boolean;
  logger?: LoggerService | LogLevel[] | false;
  stageTimeoutMs?: Partial<Record<StageName, number>>;
  readyTimeoutMs?: number;
  host?: string;
  log?: (line: string) => void;
}

/** What the start function of a service that calls the model (startSampler, startTrainer) takes. */
export interface BackendServiceStartOptions<C extends BackendServiceConfig = BackendServiceConfig> extends ServiceStartOptions<C> {
  backend: PolicyBackend;
}

/** A service without a backend (grader, advantage). */
export function runServiceMain<C extends ServiceConfig>(
  service: string,
  loadConfig: (env: NodeJS.ProcessEnv) => C,
  start: (opts: ServiceStartOptions<C>) => Promise<RunningService>,
): Promise<void> {
  return runMain(service, () => ({ config: loadConfig(process.env) }), ({ config }) => start({ config, installSignalHandlers: true }), async () => undefined);
}

/** A service that calls the model (sampler, trainer): `backendFor` is backendFromConfig (RX_BACKEND_URL's); a test entry point passes its double. */
export function runBackendServiceMain<C extends BackendServiceConfig>(
  service: string,
  loadConfig: (env: NodeJS.ProcessEnv) => C,
  start: (opts: BackendServiceStartOptions<C>) => Promise<RunningService>,
  backendFor: (config: C) => PolicyBackend = backendFromConfig,
): Promise<void> {
  return runMain(
    service,
    () => {
      const config = loadConfig(process.env);
      return { config, backend: backendFor(config) };
    },
    ({ config, backend }) => start({ config, backend, installSignalHandlers: true }),
    ({ backend }) => backend.close(),
  );
}

async function runMain<P>(service: string, prepare: () => P, start: (prepared: P) => Promise<RunningService>, release: (prepared: P) => Promise<void>): Promise<void> {
  let prepared: P;
  try {
    prepared = prepare();
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    process.stderr.write(`${err.message.startsWith(service) ? '' : `${service}: `}${err.message}\n`);
    process.exitCode = 1;
    return;
  }
  try {
    await start(prepared);
  } catch (err) {
    process.stderr.write(`${service}: failed to start: ${(err as Error).message}\n`);
    await release(prepared).catch(() => undefined);
    process.exit(1);
  }
}
