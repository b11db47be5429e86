// evaluator_validation: every score names an evaluator whose identity is the hash of its provenance, with a code
// hash and the items it scored (ids, or a manifest file whose hash is re-derived); each score's predictions file
// is in the run directory, holds exactly those items, and gives the score's value.
import type { Evaluator, ExchangeRecord } from '../exchange-record.schema';
import { canonicalJson, fileIssue, isSha256, jsonLines, sha256Text, verdict, type RecordEvidence, type RecordFiles, type ValidatorVerdict } from '../record-evidence';

// evaluator id = sha256(canonical JSON of {code_sha256, prompt_template, decoding, parser, items})
export function evaluatorIdentity(e: Evaluator): string {
  const { code_sha256, prompt_template, decoding, parser, items } = e;
  return sha256Text(canonicalJson({ code_sha256, prompt_template, decoding, parser, items }));
}

/** the item ids an evaluator declares (inline, or from its manifest file: one {"item_id"} per line); issues when neither holds */
export function evaluatorItems(id: string, e: Evaluator, files: RecordFiles): { ids: string[] | null; issues: string[] } {
  const it = e.items;
  if (Array.isArray(it.ids) && it.ids.length > 0) {
    const issues = it.count !== undefined && it.count !== it.ids.length ? [`Evaluator ${id}: items.count ${it.count} differs from its ${it.ids.length} item IDs.`] : [];
    return { ids: it.ids, issues };
  }
  if (typeof it.manifest_ref !== 'string' || !isSha256(it.manifest_sha256)) return { ids: null, issues: [`Evaluator ${id}: item IDs or a hashed item manifest are required.`] };
  const missing = fileIssue(files, it.manifest_ref, it.manifest_sha256, 'item manifest');
  if (missing) return { ids: null, issues: [`Evaluator ${id}: ${missing}.`] };
  const lines = jsonLines((files[it.manifest_ref] as { text: string }).text);
  const ids = lines?.map((l) => l.item_id);
  if (!ids || ids.length === 0 || ids.some((x) => typeof x !== 'string')) return { ids: null, issues: [`Evaluator ${id}: item manifest ${it.manifest_ref} is not one {"item_id"} JSON line per item.`] };
  const issues = it.count !== undefined && it.count !== ids.length ? [`Evaluator ${id}: items.count ${it.count} differs from the ${ids.length} items of its manifest.`] : [];
  return { ids: ids as string[], issues };
}

function sameItems(declared: readonly string[], got: readonly string[]): string | null {
  const want = new Set(declared);
  const have = new Set(got);
  const missing = declared.filter((x) => !have.has(x));
  const extra = got.filter((x) => !want.has(x));
  if (missing.length === 0 && extra.length === 0 && have.size === got.length) return null;
  const dup = got.length - have.size;
  return [
    missing.length ? `${missing.length} item(s) missing (${missing.slice(0, 3).join(', ')})` : '',
    extra.length ? `${extra.length} item(s) not in the manifest (${extra.slice(0, 3).join(', ')})` : '',
    dup ? `${dup} duplicate item(s)` : '',
  ]
    .filter(Boolean)
    .join(', ');
}

export function evaluatorValidation(record: ExchangeRecord, evidence: RecordEvidence): ValidatorVerdict {
  const { files } = evidence;
  const issues: string[] = [];
  const items = new Map<string, string[] | null>();
  const evaluators = Object.entries(record.evaluation.evaluators);
  if (evaluators.length === 0) issues.push('No evaluator is recorded.');
  for (const [id, e] of evaluators) {
    const declared = evaluatorItems(id, e, files);
    items.set(id, declared.ids);
    issues.push(...declared.issues);
    if (!isSha256(e.code_sha256)) issues.push(`Evaluator ${id}: code_sha256 is required.`);
    // code_sha256 = sha256(canonical JSON of {file: sha256}) when the evaluator lists its code files
    else if (e.code_files !== undefined && sha256Text(canonicalJson(e.code_files)) !== e.code_sha256) issues.push(`Evaluator ${id}: code_sha256 is not the hash of its code_files.`);
    if (evaluatorIdentity(e) !== id) issues.push(`Evaluator ${id}: identity does not match provenance hash.`);
  }
  const arms = new Set(evidence.expected.arms.map((a) => a.name));
  for (const arm of arms) if (!record.evaluation.scores.some((s) => s.arm === arm)) issues.push(`No score for arm ${arm}.`);
  const usedBy = new Set(record.evaluation.scores.filter((s) => arms.has(s.arm)).map((s) => s.evaluator_id));
  if (usedBy.size > 1) issues.push(`The arms are scored by different evaluators (${[...usedBy].join(', ')}): not comparable.`);
  for (const s of record.evaluation.scores) {
    const where = `Score ${s.arm}/${s.metric}`;
    if (!record.evaluation.evaluators[s.evaluator_id]) {
      issues.push(`${where}: evaluator ${s.evaluator_id} is not recorded.`);
      continue;
    }
    const missing = fileIssue(files, s.predictions_ref, s.predictions_sha256, 'predictions file');
    if (missing) {
      issues.push(`${where}: ${missing}.`);
      continue;
    }
    const lines = jsonLines((files[s.predictions_ref] as { text: string }).text);
    if (!lines || lines.some((l) => typeof l.item_id !== 'string' || typeof l.correct !== 'boolean')) {
      issues.push(`${where}: ${s.predictions_ref} is not one {"item_id", "correct"} JSON line per item.`);
      continue;
    }
    const declared = items.get(s.evaluator_id);
    const diff = declared ? sameItems(declared, lines.map((l) => l.item_id as string)) : null;
    if (diff) issues.push(`${where}: ${s.predictions_ref} does not hold the evaluator's items: ${diff}.`);
    // accuracy = correct items / items
    const accuracy = lines.filter((l) => l.correct === true).length / lines.length;
    if (s.metric === 'accuracy' && Math.abs(accuracy - s.value) > 1e-12) issues.push(`${where}: value ${s.value} differs from the ${accuracy} its predictions give.`);
  }
  return verdict('evaluator_validation', 'invalid', issues);
}
