// decision_validation: the observation file the decision was scored from is retained (name and sha256, and the
// file itself, whose bytes hash to it); its pairs are the arms' predictions, item for item; and the paired rule of
// the spec under its pre-registered bound (Hoeffding by default), applied to it again, gives the verdict_report's
// effect and bounds.
import { pairedBound, type HoeffdingResult } from '@rx/stats';
import type { ExchangeRecord } from '../exchange-record.schema';
import { isSha256, jsonLines, verdict, type RecordEvidence, type ValidatorVerdict } from '../record-evidence';

export const OBSERVATIONS_NOT_RETAINED = 'Observation file name/hash is not retained for this run.';

/** item_id -> correct (1/0) of an arm's predictions file, null when it cannot be read */
function armCorrectness(record: ExchangeRecord, evidence: RecordEvidence, arm: string): Map<string, number> | null {
  const score = record.evaluation.scores.find((s) => s.arm === arm);
  const file = score ? evidence.files[score.predictions_ref] : null;
  const lines = file ? jsonLines(file.text) : null;
  return lines ? new Map(lines.map((l) => [String(l.item_id), l.correct === true ? 1 : 0])) : null;
}

export function decisionValidation(record: ExchangeRecord, evidence: RecordEvidence): ValidatorVerdict {
  const fail = (issues: string[]) => verdict('decision_validation', 'unverified', issues);
  const o = record.decision.observations_file;
  if (!o || o.name.trim() === '' || !isSha256(o.sha256)) return fail([OBSERVATIONS_NOT_RETAINED]);
  const file = evidence.files[o.name];
  if (!file) return fail([OBSERVATIONS_NOT_RETAINED, `${o.name} is not in the run directory.`]);
  if (file.sha256 !== o.sha256) return fail([`Observation file ${o.name}: its bytes hash to ${file.sha256.slice(0, 12)}…, not the recorded ${o.sha256.slice(0, 12)}….`]);
  const lines = jsonLines(file.text);
  if (!lines || lines.length === 0 || lines.some((l) => typeof l.item_id !== 'string' || typeof l.treatment !== 'number' || typeof l.baseline !== 'number')) {
    return fail([`Observation file ${o.name} is not one {"item_id", "treatment", "baseline"} JSON line per item.`]);
  }
  const issues: string[] = [];
  const { expected } = evidence;
  for (const [role, arm] of [['treatment', expected.treatment], ['baseline', expected.baseline]] as const) {
    const correct = armCorrectness(record, evidence, arm);
    if (!correct) {
      issues.push(`The ${role} arm ${arm} has no readable predictions file to pair the observations with.`);
      continue;
    }
    const off = lines.filter((l) => correct.get(l.item_id as string) !== l[role]);
    if (off.length > 0 || correct.size !== lines.length) {
      issues.push(`Observations of ${role} ${arm} differ from its predictions: ${off.length} item(s) disagree, ${correct.size} predictions vs ${lines.length} observations.`);
    }
  }
  const v = record.verdict_report;
  if (!v) return fail([...issues, 'No verdict_report to check against the observations.']);
  const rule = expected.decision;
  if (v.margin !== rule.margin) issues.push(`verdict_report margin ${v.margin} is not the spec's ${rule.margin}.`);
  let r: HoeffdingResult;
  try {
    r = pairedBound({ itemIds: lines.map((l) => l.item_id as string), treatment: lines.map((l) => l.treatment as number), baseline: lines.map((l) => l.baseline as number) }, rule);
  } catch (err) {
    return fail([...issues, `The decision rule cannot be applied to ${o.name}: ${(err as Error).message}.`]);
  }
  for (const k of ['effect', 'lower', 'upper'] as const) {
    if (Math.abs(r[k] - v[k]) > 1e-12) issues.push(`verdict_report ${k} ${v[k]} differs from the ${r[k]} the observations give.`);
  }
  return fail(issues);
}
