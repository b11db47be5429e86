// rx plan's printed form: the decision per bound (the pre-registered first, the others labelled exploratory), the
// cost per arm and in all, the wall time, money or why not, and the budget.
import { BOUND_LABELS, type BoundName } from '@rx/stats';
import type { Plan } from './plan';
import { totalTokens, type WorkCount } from './plan-cost';

const signed = (x: number) => `${x >= 0 ? '+' : ''}${x.toFixed(4)}`;
const pct = (p: number | null) => (p === null ? '  -  ' : `${(100 * p).toFixed(1).padStart(5)}%`);
const int = (x: number) => Math.round(x).toLocaleString('en-US');

function work(name: string, w: WorkCount): string {
  return `  ${name.padEnd(12)} ${int(w.tokens.sampled).padStart(13)} ${int(w.tokens.prefill).padStart(13)} ${int(w.tokens.trained).padStart(13)} ${int(totalTokens(w)).padStart(14)}   fb ${w.calls.forward_backward}, optim ${w.calls.optim_step}, sample ${int(w.calls.sample)}, logprobs ${w.calls.compute_logprobs}, checkpoints ${w.checkpoints}`;
}

export function formatPlan(p: Plan): string[] {
  const out: string[] = [];
  out.push(`plan for ${p.spec} (${p.backend} backend)`);
  out.push('');
  out.push(`decision: n = ${p.n} paired items, alpha ${p.alpha}, margin ${p.margin}; discordance ${p.discordance.rate.toFixed(4)} (${p.discordance.source})`);
  const effects = Object.keys(p.bounds[p.bound].power);
  out.push(`  ${'bound'.padEnd(62)} ${'half-width'.padStart(10)} ${'min effect'.padStart(11)}   power at true effect ${effects.map((e) => signed(Number(e))).join(' / ')}`);
  for (const [name, b] of Object.entries(p.bounds) as Array<[BoundName, Plan['bounds'][BoundName]]>) {
    const label = `${BOUND_LABELS[name]} (${b.role === 'pre-registered' ? 'pre-registered: the verdict' : 'exploratory, not the pre-registered rule'})`;
    const min = b.min_effect_noninferior === null ? 'none' : `> ${signed(b.min_effect_noninferior)}`;
    out.push(`  ${label.padEnd(62)} ${b.half_width.toFixed(4).padStart(10)} ${min.padStart(11)}   ${effects.map((e) => pct(b.power[e])).join('   ')}`);
    if (b.min_effect_superior !== null) out.push(`  ${''.padEnd(62)} superiority needs an observed effect > ${signed(b.min_effect_superior)}`);
  }
  out.push('  (min effect: the smallest observed effect whose lower bound clears the margin; power: P(noninferiority concluded))');
  if (p.decision_note) out.push(`  note: ${p.decision_note}`);
  out.push('');
  const a = p.cost.assumptions;
  out.push(`cost: ${a.promptTokens} prompt tokens per item and ${a.sampledTokens} sampled tokens per completion (${a.source})`);
  out.push(`  ${''.padEnd(12)} ${'sampled'.padStart(13)} ${'prefill'.padStart(13)} ${'trained'.padStart(13)} ${'all tokens'.padStart(14)}   calls`);
  for (const [arm, w] of Object.entries(p.cost.per_arm)) out.push(work(arm, w));
  out.push(work('shared', p.cost.shared));
  out.push(work('total', { tokens: p.cost.tokens, calls: p.cost.calls, checkpoints: p.cost.checkpoints, steps: 0, eval_items: 0 }));
  out.push('  (per arm: its training, pilot share, dev curve, evaluation and probe; shared: the base evaluation, held-out draws, correctness checks, initial state)');
  const wpart = p.cost.wall.parts;
  out.push(`  wall: ${p.cost.wall.minutes.toFixed(1)} min (fixed ${(wpart.fixed / 60).toFixed(1)}, pilot ${(wpart.pilot / 60).toFixed(1)}, training ${(wpart.training / 60).toFixed(1)}, evaluation ${(wpart.evaluation / 60).toFixed(1)}); seconds per unit from ${p.cost.wall.source}`);
  out.push(`  money: ${p.cost.usd === null ? p.cost.money_note : `$${p.cost.usd.toFixed(2)} (${p.cost.money_note})`}`);
  out.push('');
  out.push(`budget: ${p.budget.within ? 'within' : 'EXCEEDED'}: ${p.budget.lines.join('; ')}`);
  return out;
}
