// Parsing a spec: zod issues become one line each, "<json.path>: <message>".
import { z } from 'zod';
import { experimentSpecSchema, type ExperimentSpec } from './experiment-spec.schema';

export type SpecParseResult = { ok: true; spec: ExperimentSpec } | { ok: false; errors: string[] };

export function parseSpec(json: unknown): SpecParseResult {
  const result = experimentSpecSchema.safeParse(json);
  if (result.success) return { ok: true, spec: result.data };
  return { ok: false, errors: result.error.issues.flatMap(formatIssue) };
}

/** Parses JSON text, then the spec; invalid JSON gives the same error shape (path `$`). */
export function loadSpecText(text: string): SpecParseResult {
  let json: unknown;
  try {
    json = JSON.parse(text.replace(/^\uFEFF/, ''));
  } catch (err) {
    const why = err instanceof Error ? err.message : String(err);
    return { ok: false, errors: [`$: invalid JSON: ${oneLine(why.replace(/\s*\n\s*/g, ' '))}`] };
  }
  return parseSpec(json);
}

/** `["arms", 1, "lr"]` → `arms[1].lr`; the root is `$`. */
export function formatJsonPath(path: ReadonlyArray<string | number>): string {
  let out = '';
  for (const part of path) {
    if (typeof part === 'number') out += `[${part}]`;
    else if (/^[A-Za-z_][A-Za-z0-9_]*$/.test(part)) out += out === '' ? part : `.${part}`;
    else out += `[${JSON.stringify(part)}]`;
  }
  return out === '' ? '$' : out;
}

/** Control characters (line breaks, NUL, ESC…) from the spec's own strings are escaped, so each error stays one line. */
function oneLine(text: string): string {
  // eslint-disable-next-line no-control-regex
  return text.replace(/[\u0000-\u001f\u007f\u2028\u2029]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

function formatIssue(issue: z.ZodIssue): string[] {
  return formatIssueLines(issue).map(oneLine);
}

function formatIssueLines(issue: z.ZodIssue): string[] {
  if (issue.code === 'unrecognized_keys') return issue.keys.map((k) => `${formatJsonPath([...issue.path, k])}: unknown field`);
  // zod's generic "Required" (a schema may carry its own, more telling message)
  if (issue.code === 'invalid_type' && issue.received === 'undefined' && issue.message === 'Required') return [`${formatJsonPath(issue.path)}: required field is missing`];
  return [`${formatJsonPath(issue.path)}: ${issue.message}`];
}
