// Compares gate metrics with the spec's activation-gate bounds. The bounds come from the spec only.
import { GATE_METRIC_NAMES, SET_VALUED_GATE_METRICS, type GateMetricName } from './gate-metric-name';
import type { GateMetrics } from './gate-metrics';

/** One check of `activation_gate.checks`, as the spec writes it. */
export interface GateCheckSpec {
  metric: GateMetricName;
  measures?: string;
  one_of?: readonly string[];
  min?: number;
  max?: number;
}

/** The part of an experiment spec that the gates read. */
export interface ActivationGateSource {
  activation_gate: { applicable: boolean; checks: readonly GateCheckSpec[] };
}

export interface GateResult {
  metric: GateMetricName;
  measures: string;
  /** a set for the executed group sizes; null when it could not be computed */
  value: number | number[] | null;
  bound: { one_of?: number[]; min?: number; max?: number };
  /** the bound in words: "in {1}", ">= 8", "in [0.1, 0.9]" */
  boundText: string;
  pass: boolean;
  /** how far the value lies outside [min, max]; null when it passed or has no numeric distance */
  failedBy: number | null;
  /** values seen that are not in one_of */
  offending: number[];
  /** one line: value, bound and verdict */
  detail: string;
}

export interface GateReport {
  applicable: boolean;
  pass: boolean;
  results: GateResult[];
  failed: GateMetricName[];
}

// pass = value present and every value v satisfies v in one_of, v >= min, v <= max (bounds inclusive)
export function evaluateGates(spec: ActivationGateSource, metrics: GateMetrics): GateReport {
  const gate = spec.activation_gate;
  if (!gate.applicable) return { applicable: false, pass: true, results: [], failed: [] };
  const results = gate.checks.map((check) => evaluateCheck(check, metrics));
  const failed = results.filter((r) => !r.pass).map((r) => r.metric);
  return { applicable: true, pass: failed.length === 0, results, failed };
}

/** One line per gate, for logs and the run record. */
export function formatGateReport(report: GateReport): string[] {
  if (!report.applicable) return ['activation gate: not applicable'];
  return [`activation gate: ${report.pass ? 'PASS' : `FAIL (${report.failed.join(', ')})`}`, ...report.results.map((r) => `  ${r.pass ? 'pass' : 'FAIL'} ${r.detail}`)];
}

function evaluateCheck(check: GateCheckSpec, metrics: GateMetrics): GateResult {
  if (!(GATE_METRIC_NAMES as readonly string[]).includes(check.metric)) throw new RangeError(`unknown gate metric '${check.metric}'`);
  const oneOf = check.one_of?.map(Number);
  const bound = { ...(oneOf ? { one_of: oneOf } : {}), ...(check.min !== undefined ? { min: check.min } : {}), ...(check.max !== undefined ? { max: check.max } : {}) };
  const boundText = describeBound(bound);
  const value = metrics[check.metric];
  const base = { metric: check.metric, measures: check.measures ?? '', bound, boundText };
  const values = value === null ? [] : Array.isArray(value) ? value : [value];
  if (values.length === 0) {
    const why = metrics.missing[check.metric] ?? 'no value';
    return { ...base, value, pass: false, failedBy: null, offending: [], detail: `${check.metric}: no value (${why}); needs ${boundText}` };
  }
  const offending = oneOf ? values.filter((v) => !oneOf.includes(v)) : [];
  let outside = 0;
  for (const v of values) {
    if (check.min !== undefined) outside = Math.max(outside, check.min - v);
    if (check.max !== undefined) outside = Math.max(outside, v - check.max);
  }
  const pass = offending.length === 0 && outside <= 0;
  const shown = SET_VALUED_GATE_METRICS.includes(check.metric) ? `{${values.map(formatGateNumber).join(', ')}}` : formatGateNumber(values[0]);
  let detail = `${check.metric} = ${shown}, needs ${boundText}`;
  if (offending.length > 0) detail += `; ${offending.map(formatGateNumber).join(', ')} not allowed`;
  if (outside > 0) detail += `; outside by ${formatGateNumber(outside)}`;
  return { ...base, value, pass, failedBy: outside > 0 ? outside : null, offending, detail };
}

/** A gate number for people: integers as they are, others to 4 significant digits (the report keeps the exact value). */
export function formatGateNumber(v: number): string {
  return Number.isInteger(v) || !Number.isFinite(v) ? String(v) : String(Number(v.toPrecision(4)));
}

function describeBound(b: GateResult['bound']): string {
  const parts: string[] = [];
  if (b.one_of) parts.push(`in {${b.one_of.join(', ')}}`);
  if (b.min !== undefined && b.max !== undefined) parts.push(`in [${b.min}, ${b.max}]`);
  else if (b.min !== undefined) parts.push(`>= ${b.min}`);
  else if (b.max !== undefined) parts.push(`<= ${b.max}`);
  return parts.join(' and ');
}
