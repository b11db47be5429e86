// Starts the policy server over a PolicyBackend (used by main.ts and by tests) and closes it gracefully:
// pending long-polls are answered, running work may finish (up to the grace period), then the HTTP server
// closes. The backend belongs to the caller and is not closed here.
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { NestFactory } from '@nestjs/core';
import { Logger, type LogLevel } from '@nestjs/common';
import type { NestExpressApplication } from '@nestjs/platform-express';
import type { PolicyBackend } from '@rx/backend';
import type { PolicyServerConfig } from './config';
import { HttpErrorFilter } from './http-error.filter';
import { authMiddleware } from './auth';
import { hostedLikeFaultsMiddleware } from './hosted-like.faults';
import { bodyErrorMiddleware, jsonBodyMiddleware, latencyMiddleware, metricsMiddleware } from './http-middleware';
import { PolicyServerModule } from './policy-server.module';
import { protobufBodyMiddleware } from './protobuf-body.middleware';
import { PolicyServerContext } from './policy-server.context';
import { SamplersService } from './samplers.service';
import { SessionsService } from './sessions.service';
import { TrainingModelsService } from './training-models.service';

export interface PolicyServer {
  /** http://host:port */
  url: string;
  port: number;
  app: NestExpressApplication;
  /** Graceful stop: answers long-polls, lets running work finish (shutdownGraceMs), closes the HTTP server. */
  close(): Promise<void>;
}

export interface PolicyServerOptions {
  /** Nest log levels (default: errors and warnings); false silences Nest */
  logger?: LogLevel[] | false;
}

export async function startPolicyServer(
  config: PolicyServerConfig,
  backend: PolicyBackend,
  options: PolicyServerOptions = {},
): Promise<PolicyServer> {
  const app = await NestFactory.create<NestExpressApplication>(PolicyServerModule.forRoot(config, backend), {
    bodyParser: false,
    abortOnError: false,
    logger: options.logger ?? ['error', 'warn'],
  });
  const ctx = app.get(PolicyServerContext);
  app.disable('x-powered-by');
  app.use(metricsMiddleware(ctx.metrics));
  app.use(authMiddleware(config.apiKey));
  app.use(latencyMiddleware(config.latencyMs));
  app.use(protobufBodyMiddleware(config));
  app.use(jsonBodyMiddleware(config));
  app.use(bodyErrorMiddleware(config));
  if (config.hostedLike) {
    const log = new Logger('hosted-like');
    app.use(hostedLikeFaultsMiddleware(config.hostedLike.faults, { loseSessions: () => loseEverySession(app), log: (l) => log.warn(l) }));
  }
  app.useGlobalFilters(new HttpErrorFilter());
  limitConnections(app.getHttpServer() as Server, config);
  await app.listen(config.port, config.host);
  const { port } = app.getHttpServer().address() as AddressInfo;
  const host = config.host.includes(':') ? `[${config.host}]` : config.host;

  let closing: Promise<void> | undefined;
  const close = (): Promise<void> => {
    closing ??= (async () => {
      ctx.futures.beginShutdown();
      await ctx.futures.drain(config.shutdownGraceMs);
      await app.close();
    })();
    return closing;
  };
  return { url: `http://${host}:${port}`, port, app, close };
}

/** hosted-like lost sessions: every session is forgotten, with its models and samplers (their calls answer 404) */
function loseEverySession(app: NestExpressApplication): number {
  const lost = app.get(SessionsService).loseAll();
  app.get(TrainingModelsService).forgetSessions(lost);
  app.get(SamplersService).forgetSessions(lost);
  return lost.size;
}

/**
 * Slow or too many clients: a request must arrive whole within requestTimeoutMs (its headers within
 * headersTimeoutMs), else 408; connections beyond maxConnections are closed at once. Node checks the timeouts
 * every connectionsCheckingInterval (30 s by default): checked at a fraction of the shorter one instead.
 */
export function limitConnections(server: Server, config: Pick<PolicyServerConfig, 'requestTimeoutMs' | 'headersTimeoutMs' | 'maxConnections'>): void {
  server.requestTimeout = config.requestTimeoutMs;
  server.headersTimeout = config.headersTimeoutMs;
  server.maxConnections = config.maxConnections;
  // a public property read when the server starts listening (an option of http.createServer otherwise)
  (server as Server & { connectionsCheckingInterval: number }).connectionsCheckingInterval = Math.max(10, Math.min(1000, Math.floor(config.headersTimeoutMs / 4)));
}
