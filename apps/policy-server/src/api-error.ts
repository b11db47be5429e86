// HTTP errors of the policy server: a status and one clear message, rendered as JSON `{ "error": "…" }`.
import { HttpException } from '@nestjs/common';
import type { ZodError } from 'zod';

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
