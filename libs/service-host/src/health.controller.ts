// The health and metrics endpoints of every rx Nest app (the pipeline services, the controller, the policy server),
// over the HealthProbes the app provides:
//   GET /health         the combined report: { status, <probe>: yes/no for each probe, ...the app's details }; 503
//                       (with `error` naming the probes that did not answer) unless every probe answers
//   GET /health/live    terminus: the process answers (liveness; never a probe, so a Redis or backend outage does not
//                       get every pod restarted)
//   GET /health/ready   terminus: every probe answers (readiness; 503 naming the one that did not)
//   GET /metrics        the app's Prometheus exposition, with its content type
// An app spreads healthEndpoints(...) into its module; the policy server passes its @Public() for the health routes.
import { applyDecorators, Controller, Get, HttpException, Inject, Res, type FactoryProvider, type ModuleMetadata, type Provider, type Type, type ValueProvider } from '@nestjs/common';
import { HealthCheck, HealthCheckService, HealthIndicatorService, TerminusModule, type HealthCheckResult, type HealthIndicatorResult } from '@nestjs/terminus';
import type { Response } from 'express';
import { withTimeout } from '@rx/pipeline';

export const HEALTH_PROBES = Symbol('HEALTH_PROBES');

/** What an app's health and metrics endpoints read. */
export interface HealthProbes {
  /** the dependencies /health and /health/ready check, by name, in this order: each answers yes or no */
  readonly probes: Readonly<Record<string, () => Promise<boolean>>>;
  /** fields GET /health adds to its report (the service, the run and phase, the backend's kind) */
  details?(): Record<string, unknown>;
  /** what GET /metrics answers */
  readonly metrics: { exposition(): Promise<string>; readonly contentType: string };
}

export interface HealthReport {
  status: 'ok' | 'unavailable';
  /** which probes did not answer (only when unavailable) */
  error?: string;
  [field: string]: unknown;
}

/** how long one probe may take before it counts as down */
export const PROBE_TIMEOUT_MS = 2500;

function answers(probe: () => Promise<boolean>, key: string): Promise<boolean> {
  // a probe that throws, rejects, answers anything but true or takes too long: down
  return withTimeout(Promise.resolve().then(probe), PROBE_TIMEOUT_MS, `${key} ping`).then(
    (up) => up === true,
    () => false,
  );
}

/** Every probe at once (each within PROBE_TIMEOUT_MS): the report GET /health answers. */
export async function checkHealth(health: HealthProbes): Promise<HealthReport> {
  const names = Object.keys(health.probes);
  const up = await Promise.all(names.map((name) => answers(health.probes[name], name)));
  const down = names.filter((_, i) => !up[i]);
  return {
    status: down.length === 0 ? 'ok' : 'unavailable',
    ...health.details?.(),
    ...Object.fromEntries(names.map((name, i) => [name, up[i]])),
    ...(down.length > 0 ? { error: `${down.join(' and ')} ${down.length === 1 ? 'does' : 'do'} not answer` } : {}),
  };
}

/** a terminus indicator over a yes/no probe (up when it answers true within the probe timeout) */
export async function probeIndicator(indicators: HealthIndicatorService, key: string, probe: () => Promise<boolean>): Promise<HealthIndicatorResult> {
  const session = indicators.check(key);
  return (await answers(probe, key)) ? session.up() : session.down({ message: `${key} does not answer` });
}

/** Decorators added to the routes, e.g. the policy server's @Public() on the health routes (not on /metrics). */
export interface HealthRouteDecorators {
  health?: MethodDecorator[];
  metrics?: MethodDecorator[];
}

/** The controller of /health, /health/live, /health/ready and /metrics over HEALTH_PROBES, with `routes` applied. */
export function healthController(routes: HealthRouteDecorators = {}): Type<unknown> {
  const healthRoute = applyDecorators(...(routes.health ?? []));
  const metricsRoute = applyDecorators(...(routes.metrics ?? []));

  @Controller()
  class HealthController {
    constructor(
      @Inject(HEALTH_PROBES) private readonly probes: HealthProbes,
      private readonly health: HealthCheckService,
      private readonly indicators: HealthIndicatorService,
    ) {}

    @healthRoute
    @Get('health')
    async report(): Promise<HealthReport> {
      const report = await checkHealth(this.probes);
      if (report.status !== 'ok') throw new HttpException(report, 503);
      return report;
    }

    @healthRoute
    @Get('health/live')
    @HealthCheck()
    live(): Promise<HealthCheckResult> {
      return this.health.check([]);
    }

    @healthRoute
    @Get('health/ready')
    @HealthCheck()
    ready(): Promise<HealthCheckResult> {
      return this.health.check(Object.entries(this.probes.probes).map(([name, probe]) => () => probeIndicator(this.indicators, name, probe)));
    }

    @metricsRoute
    @Get('metrics')
    async metrics(@Res({ passthrough: true }) res: Response): Promise<string> {
      const body = await this.probes.metrics.exposition();
      res.setHeader('Content-Type', this.probes.metrics.contentType);
      return body;
    }
  }
  return HealthController;
}

/**
 * What a Nest module adds to serve the health and metrics endpoints: terminus, the HEALTH_PROBES provider (a value,
 * or a factory over the module's own providers) and the controller. Spread it into the module's metadata.
 */
export function healthEndpoints(
  probes: Omit<ValueProvider<HealthProbes>, 'provide'> | Omit<FactoryProvider<HealthProbes>, 'provide'>,
  routes: HealthRouteDecorators = {},
): { imports: NonNullable<ModuleMetadata['imports']>; providers: Provider[]; controllers: Type<unknown>[] } {
  return {
    imports: [TerminusModule.forRoot({ logger: false })],
    providers: [{ provide: HEALTH_PROBES, ...probes }],
    controllers: [healthController(routes)],
  };
}
