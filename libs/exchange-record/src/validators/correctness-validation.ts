// correctness_validation: each correctness path of the spec is in the record with its fixed input's sha256, its
// precision and normalization, and its revisions pinned in a checkable form: the baseline at a commit (40 hex)
// plus the file that states its semantics, the reference and the implementation as `<file> sha256 <hex>` of files
// shipped with the record, whose bytes are re-hashed here. A revision the spec pins must be matched exactly.
// The measured errors are held against the spec's tolerances (max_abs <= atol + rtol * reference_max_abs, cosine).
import type { ExchangeRecord, PreflightPath } from '../exchange-record.schema';
import { isSha256, verdict, type ExpectedPath, type RecordEvidence, type ValidatorVerdict } from '../record-evidence';

const FILE_PIN = /(\S+) sha256 ([0-9a-f]{64})\b/g;
const COMMIT = /\b[0-9a-f]{40}\b/;

export function isUnresolved(revision: string): boolean {
  return /^\s*UNRESOLVED\b/i.test(revision);
}

/** `<file> sha256 <hex>` pins of a revision string */
export function filePins(revision: string): Array<{ file: string; sha256: string }> {
  return [...revision.matchAll(FILE_PIN)].map((m) => ({ file: m[1], sha256: m[2] }));
}

function revisionIssues(id: string, kind: string, revision: string, pinnedBySpec: string | null, needsCommit: boolean, evidence: RecordEvidence): string[] {
  const need = `${id}: matching ${kind} required`;
  if (pinnedBySpec !== null && !isUnresolved(pinnedBySpec) && revision !== pinnedBySpec) return [`${need}: the spec pins '${pinnedBySpec}'`];
  const pins = filePins(revision);
  const out: string[] = [];
  if (isUnresolved(revision) || pins.length === 0 || (needsCommit && !COMMIT.test(revision))) {
    return [`${need}: '${revision}' is not pinned in a checkable form (needs ${needsCommit ? 'a 40-hex commit and ' : ''}<file> sha256 <hex> of a file in the record)`];
  }
  for (const p of pins) {
    const f = evidence.files[p.file];
    if (!f) out.push(`${need}: ${p.file} is not in the record's files`);
    else if (f.sha256 !== p.sha256) out.push(`${need}: it pins ${p.file} at ${p.sha256.slice(0, 12)}…, the file hashes to ${f.sha256.slice(0, 12)}…`);
  }
  return out;
}

function pathIssues(want: ExpectedPath, got: PreflightPath, evidence: RecordEvidence): string[] {
  const out: string[] = [];
  if (!isSha256(got.fixed_input.sha256)) out.push(`${want.id}: fixed_input has no sha256`);
  if (got.precision.trim() === '') out.push(`${want.id}: precision not recorded`);
  if (got.normalization.trim() === '') out.push(`${want.id}: normalization not recorded`);
  out.push(...revisionIssues(want.id, 'baseline_revision', got.baseline_revision, want.baseline_revision, true, evidence));
  out.push(...revisionIssues(want.id, 'reference_revision', got.reference_revision, want.reference_revision, false, evidence));
  out.push(...revisionIssues(want.id, 'implementation_revision', got.implementation_revision, null, false, evidence));
  for (const [check, tol] of Object.entries(want.tolerances)) {
    const e = got.errors[check];
    if (!e) {
      out.push(`${want.id}: no measured errors for ${check}`);
      continue;
    }
    // max |a - e| <= atol + rtol * max |e|, and cos(a, e) >= min_cosine
    if (!(e.max_abs_error <= tol.atol + tol.rtol * Math.abs(e.reference_max_abs))) out.push(`${want.id}: ${check} max_abs_error ${e.max_abs_error} exceeds atol ${tol.atol} + rtol ${tol.rtol} * ${e.reference_max_abs}`);
    if (tol.min_cosine !== undefined && !(e.cosine_similarity >= tol.min_cosine)) out.push(`${want.id}: ${check} cosine ${e.cosine_similarity} below ${tol.min_cosine}`);
  }
  return out;
}

export function correctnessValidation(record: ExchangeRecord, evidence: RecordEvidence): ValidatorVerdict {
  const { correctness } = evidence.expected;
  if (!correctness.required) return verdict('correctness_validation', 'unverified', []);
  const issues: string[] = [];
  if (correctness.paths.length === 0) issues.push('The spec requires a correctness preflight but lists no path.');
  for (const want of correctness.paths) {
    const got = record.correctness_preflight.paths.filter((p) => p.id === want.id);
    if (got.length !== 1) issues.push(`${want.id}: ${got.length === 0 ? 'not in the record' : 'recorded more than once'}`);
    else issues.push(...pathIssues(want, got[0], evidence));
  }
  return verdict('correctness_validation', 'unverified', issues);
}
