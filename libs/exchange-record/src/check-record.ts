// rx check-record's judgement: the record parsed against the exchange's schema, then every validator, in the
// order the exchange lists them. One verdict per validator; the record passes when all pass.
import { exchangeRecordSchema, type ExchangeRecord } from './exchange-record.schema';
import type { RecordEvidence, ValidatorVerdict } from './record-evidence';
import { correctnessValidation } from './validators/correctness-validation';
import { decisionValidation } from './validators/decision-validation';
import { evaluatorValidation } from './validators/evaluator-validation';
import { feasibilityValidation } from './validators/feasibility-validation';
import { restorationValidation } from './validators/restoration-validation';

export const VALIDATORS = [evaluatorValidation, decisionValidation, restorationValidation, feasibilityValidation, correctnessValidation] as const;

export type RecordCheck = { ok: true; verdicts: ValidatorVerdict[]; pass: boolean } | { ok: false; errors: string[] };

export function validateRecord(record: ExchangeRecord, evidence: RecordEvidence): ValidatorVerdict[] {
  return VALIDATORS.map((v) => v(record, evidence));
}

export function checkRecord(value: unknown, evidence: RecordEvidence): RecordCheck {
  const parsed = exchangeRecordSchema.safeParse(value);
  if (!parsed.success) return { ok: false, errors: parsed.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`) };
  const verdicts = validateRecord(parsed.data, evidence);
  return { ok: true, verdicts, pass: verdicts.every((v) => v.status === 'passed') };
}

/** one line per validator: `name  passed|<status>  reason` */
export function verdictLine(v: ValidatorVerdict): string {
  return `${v.validator.padEnd(22)} ${(v.status === 'passed' ? 'pass' : `FAIL (${v.status})`).padEnd(18)} ${v.issues.length === 0 ? 'every check holds' : v.issues.join(' | ')}`;
}
