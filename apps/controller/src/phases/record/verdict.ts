// The verdict of a run and its reasoning, from what the run produced: the decision rule's outcome when both arms
// were trained and evaluated; otherwise why the run stopped (a failed preflight or gate, with the numbers).
import type { CorrectnessPreflightState } from '@rx/spec';
import { formatGateNumber } from '@rx/gates';
import type { DecisionSummary, PilotResult, Verdict } from '@rx/run-dir';

export interface VerdictInput {
  status: 'complete' | 'stopped' | 'failed' | 'interrupted' | 'running';
  stopReason: string | null;
  decision: DecisionSummary | null;
  pilot: PilotResult | null;
  specPreflight: CorrectnessPreflightState;
  reduced: boolean;
}

const f = (x: number): string => (Number.isFinite(x) ? x.toFixed(4) : String(x));

export function verdictOf(i: VerdictInput): Verdict {
  const caveats: string[] = [];
  if (i.reduced) caveats.push('This is a reduced run (a spec override changed its size): it tests the system, not the pre-registered hypothesis.');
  if (!i.specPreflight.resolved) {
    caveats.push(
      `The spec's correctness_preflight is marked unresolved (${i.specPreflight.unresolved.join(', ')}); this run checked its own loop against the stock group-mean path and an independent float64 reference (see correctness_preflight in this record), which the spec's revisions still have to pin.`,
    );
  }
  if (i.decision) {
    const d = i.decision;
    const m = d.rule.margin;
    const interval = `[${f(d.lower)}, ${f(d.upper)}]`;
    const main =
      d.outcome === 'supported'
        ? `Supported: the ${1 - d.rule.alpha} lower Hoeffding bound of ${d.treatment.arm} minus ${d.baseline.arm} accuracy is ${f(d.lower)} > margin ${m} over ${d.n} paired items (effect ${f(d.effect)}, half-width ${f(d.halfwidth)}): noninferior.`
        : d.outcome === 'refuted'
          ? `Refuted: the upper bound ${f(d.upper)} is at or below the margin ${m} over ${d.n} paired items (effect ${f(d.effect)}): ${d.treatment.arm} is worse than ${d.baseline.arm} by more than the margin.`
          : `Inconclusive: the interval ${interval} holds the margin ${m} over ${d.n} paired items (effect ${f(d.effect)}, half-width ${f(d.halfwidth)}); not counted as a win.`;
    const acc = `Accuracies: ${d.treatment.arm} ${f(d.treatment.accuracy)}, ${d.baseline.arm} ${f(d.baseline.accuracy)}; items where only ${d.treatment.arm} is right: ${d.wins_treatment}, only ${d.baseline.arm}: ${d.wins_baseline}.`;
    return { outcome: d.outcome, reasoning: [main, acc, ...caveats] };
  }
  if (i.status === 'stopped') {
    const lines = [`Stopped before a decision: ${i.stopReason ?? 'a pre-registered check failed'}.`];
    if (i.pilot && !i.pilot.pass) {
      for (const p of i.pilot.pilots) {
        for (const g of p.report.results.filter((r) => !r.pass)) {
          lines.push(`Gate ${g.metric} at bandwidth ${p.bandwidth}: ${g.detail}${g.failedBy !== null ? ` (short by ${formatGateNumber(g.failedBy)})` : ''}.`);
        }
      }
      lines.push('No arm was trained; the gates are never relaxed, and a changed setting needs a recorded revised spec.');
    }
    return { outcome: 'stopped', reasoning: [...lines, ...caveats] };
  }
  if (i.status === 'failed') return { outcome: 'failed', reasoning: [`The run failed: ${i.stopReason ?? 'unknown error'}.`, ...caveats] };
  return { outcome: 'incomplete', reasoning: [`The run has not finished (${i.status}${i.stopReason ? `: ${i.stopReason}` : ''}); resume it with rx run --resume.`, ...caveats] };
}
