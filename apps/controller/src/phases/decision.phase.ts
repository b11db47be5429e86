// Phase 7: the spec's paired rule under its pre-registered bound (decision_rule.bound, default hoeffding), scored
// from the two arms' eval files exactly as `rx decide` scores them (the same parse, pairing by item_id, rule and
// bound), written to decision-summary.json. The other bounds on the same pairs are written beside it as
// exploratory: the verdict never reads them.
import { allBoundRecords, BOUND_LABELS, boundRecord, pairedBound, pairItemFiles } from '@rx/stats';
import { baselineArm, decisionRule, treatmentArm } from '@rx/spec';
import type { ExperimentContext } from '../experiment/experiment-context';
import { sha256Hex } from '@rx/run-dir';
import { writeRunFile, type DecisionSummary, type EvaluationResult } from '@rx/run-dir';


export function runDecision(ctx: ExperimentContext, evaluation: EvaluationResult): DecisionSummary {
  const rule = decisionRule(ctx.spec);
  const t = treatmentArm(ctx.spec).name;
  const b = baselineArm(ctx.spec).name;
  const tFile = ctx.dir.evalFile(t);
  const bFile = ctx.dir.evalFile(b);
  const tText = ctx.dir.readText(tFile);
  const bText = ctx.dir.readText(bFile);
  const paired = pairItemFiles({ source: tFile, text: tText }, { source: bFile, text: bText });
  const { bound: _bound, ...record } = boundRecord(rule.bound, pairedBound(paired, rule));
  const exploratory = allBoundRecords(paired, rule).filter((r) => r.bound !== rule.bound);
  const summary: DecisionSummary = {
    ...record,
    rule,
    treatment: { arm: t, file: ctx.dir.relative(tFile), sha256: sha256Hex(tText), accuracy: evaluation.models[t].accuracy },
    baseline: { arm: b, file: ctx.dir.relative(bFile), sha256: sha256Hex(bText), accuracy: evaluation.models[b].accuracy },
    evaluator_id: evaluation.evaluator_id,
    exploratory,
    reproduce: `rx decide --spec ${ctx.dir.relative(ctx.dir.specFile)} --treatment ${ctx.dir.relative(tFile)} --baseline ${ctx.dir.relative(bFile)}  (from ${ctx.dir.root})`,
  };
  writeRunFile(ctx.dir, 'decision-summary.json', summary);
  ctx.metrics.setOutcome({ accuracy: Object.fromEntries(Object.entries(evaluation.models).map(([m, e]) => [m, e.accuracy])), effect: summary.effect, lower: summary.lower, upper: summary.upper, margin: rule.margin, outcome: summary.outcome });
  ctx.progress.info(
    `decision (${BOUND_LABELS[rule.bound]}, pre-registered): effect ${summary.effect.toFixed(4)}, ${Math.round((1 - rule.alpha) * 100)}% lower bound ${summary.lower.toFixed(4)} vs margin ${rule.margin} on ${summary.n} paired items: ${summary.outcome}`,
  );
  for (const e of exploratory) ctx.progress.info(`  exploratory, not the pre-registered rule: ${BOUND_LABELS[e.bound]} lower bound ${e.lower.toFixed(4)}: ${e.outcome}`);
  return summary;
}
