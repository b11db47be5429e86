// The body of every service's main.ts: validate the environment (a bad value: one line, exit 1), connect the
// backend, start the service with SIGTERM handling; a start-up failure is one line and exit 1, never a stack.
import type { LoggerService, LogLevel } from '@nestjs/common';
import type { PolicyBackend } from '@rx/backend';
import type { StageName } from '@rx/contracts';
import { backendFromConfig } from './backend-from-config';
import type { RendererResolver } from '@rx/pipeline';
import { ConfigError, type ServiceConfig } from './service-config';
import type { RunningService } from './bootstrap-service';

/** What an app's start function (startSampler, startTrainer, ...) takes. */
export interface ServiceStartOptions<C extends ServiceConfig = ServiceConfig> {
  config: C;
  backend: PolicyBackend;
  /** default: libs/backend rendererFor, memoised */
  renderers?: RendererResolver;
  installSignalHandlers?: boolean;
  logger?: LoggerService | LogLevel[] | false;
  stageTimeoutMs?: Partial<Record<StageName, number>>;
  readyTimeoutMs?: number;
  host?: string;
  log?: (line: string) => void;
}

/** `backendFor`: production services take RX_BACKEND_URL's (backendFromConfig); a test entry point passes its double */
export async function runServiceMain<C extends ServiceConfig>(
  service: string,
  loadConfig: (env: NodeJS.ProcessEnv) => C,
  start: (opts: ServiceStartOptions<C>) => Promise<RunningService>,
  backendFor: (config: C) => PolicyBackend = backendFromConfig,
): Promise<void> {
  let config: C;
  let backend: PolicyBackend;
  try {
    config = loadConfig(process.env);
    backend = backendFor(config);
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    process.stderr.write(`${err.message.startsWith(service) ? '' : `${service}: `}${err.message}\n`);
    process.exitCode = 1;
    return;
  }
  try {
    await start({ config, backend, installSignalHandlers: true });
  } catch (err) {
    process.stderr.write(`${service}: failed to start: ${(err as Error).message}\n`);
    await backend.close().catch(() => undefined);
    process.exit(1);
  }
}
