// HTTP errors of the policy server: a status and one clear message, rendered as JSON `{ "error": "…" }`.
import { HttpException } from '@nestjs/common';
import type { ZodError, ZodType, ZodTypeDef } from 'zod';

export function apiError(status: number, message: string): HttpException {
  return new HttpException({ error: message }, status);
}

/** 400 naming the first few zod issues by path. */
export function invalidRequest(what: string, error: ZodError): HttpException {
  const issues = error.issues
    .slice(0, 5)
    .map((i) => `${i.path.join('.') || '(body)'}: ${i.message}`)
    .join('; ');
  return apiError(400, `invalid ${what} request: ${issues}`);
}

/** The request body as `schema` reads it; a 400 naming what is wrong otherwise. */
export function parseRequest<T>(what: string, schema: ZodType<T, ZodTypeDef, unknown>, body: unknown): T {
  const parsed = schema.safeParse(body);
  if (!parsed.success) throw invalidRequest(what, parsed.error);
  return parsed.data;
}

/** A failure the caller caused inside a future's work; reported with category 'user'. */
export class CallerError extends Error {
  readonly category = 'user' as const;
}
