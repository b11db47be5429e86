// restoration_validation: each trained arm shows, once, that it loaded the shared initial state before its first
// update (the shared init's URI loaded, the load succeeded, the adapter's sha256, one restore), that its output on
// one fixed batch before any update is the other arms' (same batch hash, same output hash), and that its optimizer
// after the restore is the one the spec configures. Every piece is also in the arm's evidence file, re-read.
import type { ArmInitialization, ExchangeRecord } from '../exchange-record.schema';
import { isSha256, verdict, type ExpectedOptimizer, type RecordEvidence, type ValidatorVerdict } from '../record-evidence';

export const SHARED_INIT_ARM = 'shared_init';

function evidenceFileIssues(a: ArmInitialization, evidence: RecordEvidence): string[] {
  const ref = a.initialization.evidence_ref;
  if (!ref) return ['no evidence_ref'];
  const f = evidence.files[ref];
  if (!f) return [`evidence file ${ref} is not in the run directory`];
  let json: Record<string, unknown>;
  try {
    json = JSON.parse(f.text) as Record<string, unknown>;
  } catch {
    return [`evidence file ${ref} is not JSON`];
  }
  const claims: Array<[string, unknown]> = [
    ['loaded_checkpoint_uri', a.initialization.loaded_checkpoint_uri],
    ['load_succeeded', a.initialization.load_succeeded],
    ['adapter_sha256', a.initialization.adapter_sha256],
    ['restore_count', a.restore_count],
    ['batch_sha256', a.initial_output.batch_sha256],
    ['output_sha256', a.initial_output.output_sha256],
  ];
  return claims.filter(([k, v]) => json[k] !== v).map(([k]) => `${k} is not what evidence file ${ref} says`);
}

function completenessIssues(arm: string, a: ArmInitialization, sharedUri: string | null, evidence: RecordEvidence): string[] {
  const i = a.initialization;
  const out: string[] = [];
  if (sharedUri === null) out.push('no shared_init checkpoint recorded');
  else if (i.checkpoint_uri !== sharedUri) out.push(`checkpoint_uri ${i.checkpoint_uri} is not the shared init ${sharedUri}`);
  if (i.loaded_checkpoint_uri === null) out.push('no loaded_checkpoint_uri');
  else if (i.loaded_checkpoint_uri !== i.checkpoint_uri) out.push(`loaded ${i.loaded_checkpoint_uri}, not ${i.checkpoint_uri}`);
  if (!i.load_succeeded) out.push('the load did not succeed');
  if (!i.before_first_update) out.push('the load is not shown before the first update');
  if (!isSha256(i.adapter_sha256)) out.push('no adapter_sha256');
  if (a.restore_count !== 1) out.push(`restore_count ${a.restore_count}, not 1`);
  const o = a.initial_output;
  if (!o.available || !isSha256(o.batch_sha256) || !isSha256(o.output_sha256)) out.push('no initial output hash on a fixed batch');
  else if (!o.before_first_update) out.push('the initial output is not shown before the first update');
  out.push(...evidenceFileIssues(a, evidence));
  void arm;
  return out;
}

function optimizerIssues(arm: string, a: ArmInitialization, want: ExpectedOptimizer): string[] {
  const check = a.optimizer_checks.find((c) => c.after_restore === a.restore_count && c.before_next_update);
  if (!check) return [`${arm}: no optimizer check after its restore and before its next update.`];
  const out: string[] = [];
  if (check.actual_family !== want.family) out.push(`family ${check.actual_family ?? 'not reported'} (configured ${want.family})`);
  for (const k of ['lr', 'beta1', 'beta2', 'eps'] as const) {
    const got = check.actual_config?.[k];
    if (typeof got !== 'number') out.push(`${k} not reported (configured ${want[k]})`);
    else if (Math.abs(got - want[k]) > 1e-12 * Math.max(1, Math.abs(want[k]))) out.push(`${k} ${got} (configured ${want[k]})`);
  }
  return out.length ? [`${arm}: optimizer after restore not as configured: ${out.join(', ')}.`] : [];
}

export function restorationValidation(record: ExchangeRecord, evidence: RecordEvidence): ValidatorVerdict {
  const issues: string[] = [];
  const shared = record.checkpoints.filter((c) => c.arm === SHARED_INIT_ARM);
  const sharedUri = shared.length === 1 ? shared[0].uri : null;
  // the shared init's own adapter hash, where the record carries it: every arm's restore must hold that adapter
  const sharedAdapter = shared.length === 1 && typeof shared[0].adapter_sha256 === 'string' ? shared[0].adapter_sha256 : null;
  const arms = record.initialization_provenance.arms;
  const refs = new Map<string, string[]>();
  for (const [name, a] of Object.entries(arms)) {
    const ref = a.initialization.evidence_ref;
    if (ref) refs.set(ref, [...(refs.get(ref) ?? []), name]);
  }
  const complete: string[] = [];
  /** arms whose only gap is the adapter hash, by the record's note on why (one line for them all: what is needed) */
  const adapterOnly = new Map<string, string[]>();
  for (const { name, optimizer } of evidence.expected.arms) {
    const a = arms[name];
    if (!a) {
      issues.push(`${name}: missing or duplicate arm evidence (no entry for the arm).`);
      continue;
    }
    const missing = completenessIssues(name, a, sharedUri, evidence);
    const ref = a.initialization.evidence_ref;
    if (ref && (refs.get(ref)?.length ?? 0) > 1) missing.push(`evidence file ${ref} shared with ${refs.get(ref)?.filter((n) => n !== name).join(', ')}`);
    if (sharedAdapter !== null && a.initialization.adapter_sha256 !== sharedAdapter) missing.push(`adapter_sha256 is not the shared init's ${sharedAdapter.slice(0, 12)}…`);
    const note = typeof a.initialization['note'] === 'string' ? a.initialization['note'] : null;
    if (missing.length === 1 && missing[0] === 'no adapter_sha256' && note) adapterOnly.set(note, [...(adapterOnly.get(note) ?? []), name]);
    else if (missing.length > 0) issues.push(`${name}: missing or duplicate arm evidence (${missing.join('; ')}).`);
    else complete.push(name);
    issues.push(...optimizerIssues(name, a, optimizer));
  }
  for (const [note, names] of adapterOnly) {
    issues.unshift(`${names.join(', ')}: missing or duplicate arm evidence (no adapter_sha256: needs the sha256 of the adapter bytes ${names.length > 1 ? 'each arm' : 'the arm'} restored; the record says: ${note}).`);
  }
  // one shared state: every arm's adapter, fixed batch and output on it are the same (the output bit for bit, or
  // within the tolerance the record states with the difference it measured)
  for (const [what, get] of [
    ['adapter_sha256', (a: ArmInitialization) => a.initialization.adapter_sha256],
    ['fixed batch sha256', (a: ArmInitialization) => a.initial_output.batch_sha256],
    ['initial output sha256', (a: ArmInitialization) => a.initial_output.output_sha256],
  ] as const) {
    const values = new Set(complete.map((n) => get(arms[n])));
    if (values.size <= 1) continue;
    const within = what === 'initial output sha256' ? sameOutputWithinTolerance(complete.map((n) => arms[n]), evidence) : null;
    if (within === true) continue;
    issues.push(`The arms' ${what} differ (${complete.map((n) => `${n} ${String(get(arms[n])).slice(0, 12)}…`).join(', ')})${within ? `, ${within}` : ''}: not one shared initial state.`);
  }
  return verdict('restoration_validation', 'unverified', issues);
}

interface SameOutput {
  tolerance: { atol: number; rtol: number; source: string };
  max_abs_diff: number | null;
  pass: boolean;
}

function asSameOutput(v: unknown): SameOutput | null {
  if (!v || typeof v !== 'object') return null;
  const o = v as Record<string, unknown>;
  const t = o.tolerance as Record<string, unknown> | undefined;
  if (!t || typeof t.atol !== 'number' || typeof t.rtol !== 'number' || typeof t.source !== 'string') return null;
  if (!(o.max_abs_diff === null || typeof o.max_abs_diff === 'number') || typeof o.pass !== 'boolean') return null;
  return o as unknown as SameOutput;
}

/**
 * True when the arms' outputs differ only within a stated tolerance: every arm states the same comparison (its
 * tolerance and the measured max |difference|), its evidence file says the same, it passed, and the difference is
 * within atol (checked here when the tolerance has no relative part). Otherwise why not.
 */
function sameOutputWithinTolerance(arms: ArmInitialization[], evidence: RecordEvidence): true | string {
  const stated = arms.map((a) => asSameOutput((a.initial_output as Record<string, unknown>).same_output));
  const first = stated[0];
  if (!first || stated.some((s) => s === null)) return 'and no arm states a same-output tolerance with a measured difference';
  if (stated.some((s) => JSON.stringify(s) !== JSON.stringify(first))) return 'and the arms state different same-output comparisons';
  for (const a of arms) {
    const ref = a.initial_output.evidence_ref;
    const text = ref ? evidence.files[ref]?.text : undefined;
    let filed: unknown;
    try {
      filed = text ? (JSON.parse(text) as Record<string, unknown>).same_output : undefined;
    } catch {
      filed = undefined;
    }
    if (JSON.stringify(asSameOutput(filed)) !== JSON.stringify(first)) return `and the same-output comparison is not what evidence file ${ref ?? '(none)'} says`;
  }
  if (first.max_abs_diff === null) return 'and their difference could not be measured';
  const within = first.tolerance.rtol === 0 ? first.max_abs_diff <= first.tolerance.atol : true;
  if (!first.pass || !within) return `by max |logprob difference| ${first.max_abs_diff}, beyond the tolerance atol ${first.tolerance.atol} (${first.tolerance.source})`;
  return true;
}
