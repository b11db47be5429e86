// Values quoted into issue messages stay short and on one line, so that a hostile payload cannot make the
// issues of its own dead letter long (they are bounded by deadLetterSchema) or split its one-line error.
import type { z } from 'zod';

/** Most characters of a value shown in an issue message. */
const SHOWN_CHARS = 64;

// quoted(v) = 'v' with JSON's escapes (no raw line breaks), cut to SHOWN_CHARS characters and marked '…'
export function quoted(value: string | number): string {
  const escaped = JSON.stringify(String(value)).slice(1, -1);
  return `'${escaped.length > SHOWN_CHARS ? `${escaped.slice(0, SHOWN_CHARS)}…` : escaped}'`;
}

/** Error map for z.enum: zod's own refusal echoes the received value whole; this one quotes it. */
export const enumIssueMap: z.ZodErrorMap = (issue, ctx) =>
  issue.code === 'invalid_enum_value'
    ? { message: `Invalid enum value. Expected ${issue.options.map((o) => `'${String(o)}'`).join(' | ')}, received ${quoted(issue.received)}` }
    : { message: ctx.defaultError };
