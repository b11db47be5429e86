// rx validate <spec.json>: exit 0 with a one-line summary, or exit 2 with one "<json.path>: <message>" line per error.
import { readFile } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import { baselineArm, decisionRule, loadSpecText, treatmentArm, type ArmSpec, type ExperimentSpec } from '@rx/spec';
import { UserError } from '../user-error';

const USAGE = 'usage: rx validate <spec.json>';

/** An invalid spec: the message is a header line, `errors` hold the path-named errors. */
export class SpecFileError extends UserError {
  constructor(
    readonly path: string,
    readonly errors: string[],
  ) {
    super(`${shown(path)}: invalid spec (${errors.length} error${errors.length === 1 ? '' : 's'})`);
  }
}

/** Reads and validates a spec file; a missing file or bad JSON is a one-line UserError, spec errors a SpecFileError. */
export async function readSpecFile(path: string): Promise<ExperimentSpec> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    throw new UserError(`cannot read spec ${shown(path)}: ${shown(describeFsError(err))}`);
  }
  const result = loadSpecText(text);
  if (result.ok) return result.spec;
  const json = result.errors.length === 1 && result.errors[0].startsWith('$: invalid JSON: ');
  if (json) throw new UserError(`${shown(path)}: ${shown(result.errors[0].slice(3))}`);
  throw new SpecFileError(path, result.errors);
}

/** Writes a SpecFileError as its header and one indented line per error; returns the exit code 2. */
export function reportSpecFileError(err: SpecFileError): number {
  process.stderr.write(`rx: ${err.message}\n${err.errors.map((e) => `  ${shown(e)}\n`).join('')}`);
  return 2;
}

export function describeFsError(err: unknown): string {
  const code = (err as NodeJS.ErrnoException | undefined)?.code;
  if (code === 'ENOENT') return 'no such file';
  if (code === 'EISDIR') return 'is a directory';
  if (code === 'EACCES') return 'permission denied';
  return err instanceof Error ? err.message : String(err);
}

const CONTROL = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/g;
const ESCAPES: Record<string, string> = { '\n': '\\n', '\r': '\\r', '\t': '\\t' };

/** An argument, path or message as one line: control characters (line breaks) written as JSON escapes. */
export function shown(text: string): string {
  return text.replace(CONTROL, (c) => ESCAPES[c] ?? `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/**
 * parseArgs' error (unknown flag, missing value) as a one-line UserError with the usage. Its sentences are kept
 * (the hint "use '--bandwidth=-XYZ'" for a value starting with a dash is the fix), the arguments it quotes escaped.
 */
export function argsError(err: unknown, usage: string, argv: readonly string[] = []): UserError {
  // parseArgs' errors may come from another realm (jest's vm): read the message, not `instanceof Error`
  const raw = (err as { message?: unknown } | null)?.message;
  let message = typeof raw === 'string' ? raw : String(err);
  for (const arg of argv) if (shown(arg) !== arg) message = message.split(arg).join(shown(arg));
  // Node ends each sentence of a several-line message with '.' or '?' and a line break
  const sentences = message.split(/(?<=[.?])\n/).map(shown);
  return new UserError(`${sentences.join(' ').replace(/\.$/, '')}; ${usage}`);
}

export async function run(argv: string[]): Promise<number> {
  let positionals: string[];
  try {
    ({ positionals } = parseArgs({ args: argv, options: {}, strict: true, allowPositionals: true }));
  } catch (err) {
    throw argsError(err, USAGE, argv);
  }
  if (positionals.length !== 1) throw new UserError(`expected one spec file, got ${positionals.length}; ${USAGE}`);
  const path = positionals[0];
  let spec: ExperimentSpec;
  try {
    spec = await readSpecFile(path);
  } catch (err) {
    if (err instanceof SpecFileError) return reportSpecFileError(err);
    throw err;
  }
  process.stdout.write(`${summary(path, spec)}\n`);
  return 0;
}

function summary(path: string, spec: ExperimentSpec): string {
  const arm = (a: ArmSpec) => `${a.name} (${a.advantage}, ${a.groups_per_batch} prompts x ${a.group_size})`;
  const rule = decisionRule(spec);
  return [
    `${path}: valid: "${spec.title}"`,
    `treatment ${arm(treatmentArm(spec))} vs baseline ${arm(baselineArm(spec))}`,
    `${spec.steps} steps x ${spec.batch_size} rollouts on ${spec.base_model}`,
    `${spec.activation_gate.checks.length} gate checks`,
    `${rule.method} (${rule.bound} bound) alpha ${rule.alpha} margin ${rule.margin} on ${spec.eval.n_examples} ${spec.eval.benchmark} items`,
  ].join('; ');
}
