// feasibility: the projection of the run's wall time is re-done from the record: the effective configuration and
// the configuration the pilot measurements were taken at both record the ten settings the projection depends on,
// as the spec has them (else the projection must be re-done); the pilot evidence lies in the run directory; the
// setup, training and evaluation phases each have a representative timing; the recovery reserve is positive; and
// the projection fits the spec's max_wall_minutes.
import type { ExchangeRecord, PhaseMeasurement } from '../exchange-record.schema';
import { canonicalJson, FEASIBILITY_KEYS, type RecordEvidence, type ValidatorVerdict } from '../record-evidence';

export const MEASURED_PHASES = ['setup', 'training', 'evaluation'] as const;

function representative(m: PhaseMeasurement | undefined): m is PhaseMeasurement {
  return m !== undefined && m.seconds > 0 && m.units > 0 && m.planned_units > 0;
}

/** the source as a list of run-directory files (the exchange also shows it as comma-separated text) */
function sourceFiles(source: string | string[] | null): string[] {
  if (source === null) return [];
  const parts = Array.isArray(source) ? source : source.split(',');
  return parts.map((s) => s.trim()).filter((s) => s !== '');
}

// projected wall = sum over phases of seconds / units * planned_units, plus the recovery reserve (seconds)
export function projectedWallSeconds(measurements: Record<string, PhaseMeasurement>, recoverySeconds: number): number {
  return MEASURED_PHASES.reduce((s, p) => s + (measurements[p].seconds / measurements[p].units) * measurements[p].planned_units, 0) + recoverySeconds;
}

export function feasibilityValidation(record: ExchangeRecord, evidence: RecordEvidence): ValidatorVerdict {
  const f = record.feasibility;
  const want = evidence.expected.effective_config;
  const issues: string[] = [];
  if (!f.effective_config) issues.push('Effective configuration not recorded');
  for (const k of FEASIBILITY_KEYS) {
    const expected = canonicalJson(want[k]);
    const effective = f.effective_config && k in f.effective_config ? canonicalJson(f.effective_config[k]) : null;
    const measuredAt = f.config && k in f.config ? canonicalJson(f.config[k]) : null;
    if (effective !== expected || measuredAt !== expected) issues.push(`Re-projection required: ${k} changed or was not recorded`);
  }
  const sources = sourceFiles(f.source);
  if (sources.length === 0) issues.push('Pilot evidence source not recorded');
  for (const s of sources) if (!evidence.files[s]) issues.push(`Pilot evidence ${s} is not in the run directory`);
  const m = f.measurements ?? {};
  for (const p of MEASURED_PHASES) if (!representative(m[p])) issues.push(`Representative ${p} timing not recorded`);
  if (!f.recovery || !(f.recovery.seconds > 0)) issues.push('Positive recovery reserve not recorded');
  if (issues.length > 0) return { validator: 'feasibility', status: 'unknown', issues };
  const wall = projectedWallSeconds(m, (f.recovery as { seconds: number }).seconds);
  const budget = evidence.expected.max_wall_minutes * 60;
  if (!(wall <= budget)) return { validator: 'feasibility', status: 'invalid', issues: [`Projected wall time ${(wall / 60).toFixed(1)} min exceeds the budget of ${evidence.expected.max_wall_minutes} min`] };
  return { validator: 'feasibility', status: 'passed', issues: [] };
}
