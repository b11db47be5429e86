// Authentication of the policy server: with RX_POLICY_API_KEY set, every request needs the key (in X-API-Key, or
// `Authorization: Bearer <key>` for Prometheus) except the health routes, GET /health, /health/live, /health/ready
// (the probes Kubernetes sends, which carry no key), GET /api/v1/healthz, and GET /api/v1/archives/<token> (a
// checkpoint archive's signed URL: the 256-bit random token, handed out by the keyed archive route, is the credential).
// Two layers over one comparison: a middleware in front of routing that refuses anything not spelled exactly as a
// public route (so no case, percent-encoding, slash or method variant slips through, and no body is parsed for an
// unauthenticated client), and a global guard on every routed handler that lets through only handlers marked
// @Public(). Keys are compared as SHA-256 digests with crypto.timingSafeEqual (constant time, any length).
import { createHash, timingSafeEqual } from 'node:crypto';
import { Inject, Injectable, SetMetadata, type CanActivate, type ExecutionContext } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { Request, RequestHandler } from 'express';
import { apiError } from './api-error';
import type { PolicyServerConfig } from './config';
import { POLICY_SERVER_CONFIG } from './tokens';

/** The health routes, exactly as a client spells them; GET and HEAD only. */
export const PUBLIC_PATHS: ReadonlySet<string> = new Set(['/health', '/health/live', '/health/ready', '/api/v1/healthz']);
/** A checkpoint archive's signed URL: this prefix and a token of 64 lowercase hex digits (the token is the credential). */
export const ARCHIVE_DOWNLOAD_PREFIX = '/api/v1/archives/';
const ARCHIVE_DOWNLOAD = /^\/api\/v1\/archives\/[0-9a-f]{64}$/;

const UNAUTHORIZED = 'missing or wrong X-API-Key';

const IS_PUBLIC = 'rx:public-route';
/** Marks a handler that answers without the key (the health routes only). */
export const Public = (): MethodDecorator & ClassDecorator => SetMetadata(IS_PUBLIC, true);

function digest(text: string): Buffer {
  return createHash('sha256').update(text, 'utf8').digest();
}

/** The key a request carries: X-API-Key, else the token of `Authorization: Bearer`. */
export function presentedKey(req: Pick<Request, 'headers'>): string | undefined {
  const header = req.headers['x-api-key'];
  if (typeof header === 'string') return header;
  if (Array.isArray(header)) return undefined;
  const auth = req.headers.authorization;
  const bearer = typeof auth === 'string' ? /^Bearer ([^\s]+)$/i.exec(auth) : null;
  return bearer?.[1];
}

/** Whether `req` carries `apiKey`; true for every request when no key is configured. Constant time in the key. */
export function carriesKey(req: Pick<Request, 'headers'>, apiKey: string | undefined): boolean {
  if (apiKey === undefined) return true;
  const presented = presentedKey(req);
  // compare digests: equal lengths, so timingSafeEqual leaks neither the key's length nor where it differs
  return timingSafeEqual(digest(presented ?? ''), digest(apiKey)) && presented !== undefined;
}

/** A public route exactly as spelled on the wire: GET/HEAD, no encoding, no query games, no case or slash variant. */
export function isPublicRequest(req: Pick<Request, 'method' | 'originalUrl' | 'url'>): boolean {
  if (req.method !== 'GET' && req.method !== 'HEAD') return false;
  const raw = req.originalUrl ?? req.url;
  const path = raw.split('?', 1)[0];
  return PUBLIC_PATHS.has(path) || ARCHIVE_DOWNLOAD.test(path);
}

/** In front of routing: a request without the key gets 401 unless it is a public route spelled exactly. */
export function authMiddleware(apiKey: string | undefined): RequestHandler {
  return (req, res, next) => {
    if (carriesKey(req, apiKey) || isPublicRequest(req)) return next();
    res.status(401).json({ error: UNAUTHORIZED });
  };
}

/** On every routed handler: one not marked @Public() runs only for a request with the key. */
@Injectable()
export class ApiKeyGuard implements CanActivate {
  constructor(
    private readonly reflector: Reflector,
    @Inject(POLICY_SERVER_CONFIG) private readonly config: PolicyServerConfig,
  ) {}

  canActivate(context: ExecutionContext): boolean {
    const isPublic = this.reflector.getAllAndOverride<boolean>(IS_PUBLIC, [context.getHandler(), context.getClass()]);
    if (isPublic) return true;
    if (carriesKey(context.switchToHttp().getRequest<Request>(), this.config.apiKey)) return true;
    throw apiError(401, UNAUTHORIZED);
  }
}
