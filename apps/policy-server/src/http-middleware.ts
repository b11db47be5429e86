// Express middleware in front of the routes: request metrics, the fixed benchmark latency, and the JSON body
// parser with its size limit (413) and malformed-JSON (400) answers. The API key check is in auth.ts.
import express, { type NextFunction, type Request, type RequestHandler, type Response } from 'express';
import type { PolicyServerConfig } from './config';
import { endpointLabel, type ServerMetrics } from './server-metrics';

export function metricsMiddleware(metrics: ServerMetrics): RequestHandler {
  return (req, res, next) => {
    const stop = metrics.duration.startTimer({ endpoint: endpointLabel(req.path) });
    res.on('finish', () => {
      stop();
      metrics.requests.inc({ endpoint: endpointLabel(req.path), status: String(res.statusCode) });
    });
    next();
  };
}

/** Holds each /api/v1 request `ms` before handling it; dropped if the client goes away meanwhile. */
export function latencyMiddleware(ms: number): RequestHandler {
  return (req, res, next) => {
    if (ms <= 0 || !req.path.startsWith('/api/')) return next();
    const timer = setTimeout(next, ms);
    res.on('close', () => clearTimeout(timer));
  };
}

export function jsonBodyMiddleware(config: PolicyServerConfig): RequestHandler {
  return express.json({ limit: config.maxBodyBytes });
}

/** Turns body-parser failures into JSON answers (registered right after the parser). */
export function bodyErrorMiddleware(config: PolicyServerConfig) {
  return (err: unknown, _req: Request, res: Response, next: NextFunction): void => {
    const e = err as { type?: string; status?: number; message?: string; length?: number };
    if (e?.type === 'entity.too.large') {
      res.status(413).json({
        // a compressed body is stopped as it inflates, before its whole length is known
        error:
          e.length !== undefined
            ? `request body of ${e.length} bytes exceeds the limit of ${config.maxBodyBytes} bytes (RX_POLICY_MAX_BODY_BYTES)`
            : `request body exceeds the limit of ${config.maxBodyBytes} bytes once decompressed (RX_POLICY_MAX_BODY_BYTES)`,
      });
      return;
    }
    if (e?.type === 'entity.parse.failed') {
      res.status(400).json({ error: `request body is not valid JSON (${e.message ?? 'parse error'})` });
      return;
    }
    if (typeof e?.status === 'number' && e.status >= 400 && e.status < 500) {
      res.status(e.status).json({ error: e.message ?? 'bad request' });
      return;
    }
    next(err);
  };
}
