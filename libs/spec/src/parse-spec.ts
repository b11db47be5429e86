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
    return { ok: false, errors: [`$: invalid JSON: ${jsonSyntaxWhere(err, text)}`] };
  }
  return parseSpec(json);
}

/**
 * Where JSON.parse failed, without any of the text: V8's message quotes the text around the error (the whole of a
 * short file), and a file given by mistake (a key file) must not be printed. `at line 2 column 3 (of 40 characters)`.
 */
export function jsonSyntaxWhere(err: unknown, text: string): string {
  const message = err instanceof Error ? err.message : '';
  const size = `${text.length} characters`;
  const at = /line (\d+) column (\d+)/.exec(message);
  if (at) return `at line ${at[1]} column ${at[2]} (of ${size})`;
  if (/end of JSON input/.test(message)) return `it ends early (${size})`;
  const position = /at position (\d+)/.exec(message);
  if (position) return `at offset ${position[1]} (of ${size})`;
  return `not JSON (${size})`;
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
