// The budget holds during the run: before each training step (pilot steps too) and each model's evaluation, the wall
// time spent so far (every attempt's phases, state.json) plus the next unit (as long as the last one took) is
// compared with the budget in force (the spec's, or the last raise in budget-revisions.json), and so are the tokens
// charged so far plus the next unit's, as rx plan counts them (@rx/plan budgetCharges: upper bounds from max_tokens
// and max_seq_len; the fixed work charged with the first unit) against budget.max_tokens, and their price against
// budget.max_usd where the pinned price table covers backend and model. When the next unit would pass a cap, the run
// stops cleanly: state kept, status "stopped" with reason "budget: <figures>", exit 5; `rx run --resume DIR
// --override raise-budget.json` raises it (recorded as a revision) and continues where it stopped.
import { readRunFileIfExists, type BudgetCaps, type RunDir, type RunStateStore } from '@rx/run-dir';
import { tokenSum, usdOfTokens, type BudgetCharges, type PriceEntry, type TokenCount } from '@rx/plan';
import type { ExperimentSpec } from '@rx/spec';
import { RunStopped } from './experiment-context';

/** the reason's prefix that marks a stop by the budget (state.json, the record, rx status: "stopped: budget") */
export const BUDGET_STOP = 'budget:';

export class BudgetExceeded extends RunStopped {}

/** the caps in force: the last revision's, or the spec's */
export function budgetInForce(dir: RunDir, spec: ExperimentSpec): { caps: BudgetCaps; revision: number } {
  const revisions = readRunFileIfExists(dir, 'budget-revisions.json')?.revisions ?? [];
  const last = revisions[revisions.length - 1];
  return last ? { caps: last.to, revision: last.number } : { caps: { ...spec.budget }, revision: 0 };
}

/** "120 wall minutes, 2,000,000 tokens" (the caps set) */
export function describeCaps(caps: BudgetCaps): string {
  return [`${caps.max_wall_minutes} wall minutes`, ...(caps.max_tokens !== undefined ? [`${count(caps.max_tokens)} tokens`] : []), ...(caps.max_usd !== undefined ? [`$${caps.max_usd}`] : [])].join(', ');
}

const minutes = (seconds: number) => `${(seconds / 60).toFixed(2)} min`;
const count = (n: number) => Math.round(n).toLocaleString('en-US');
const plus = (a: TokenCount, b: TokenCount): TokenCount => ({ sampled: a.sampled + b.sampled, prefill: a.prefill + b.prefill, trained: a.trained + b.trained });
const NONE: TokenCount = { sampled: 0, prefill: 0, trained: 0 };

/** what the guard charges tokens by: the run's unit charges, and the price where the table has one */
export interface TokenBudget {
  charges: BudgetCharges;
  price: PriceEntry | null;
}

export class BudgetGuard {
  private exceeded: string | null = null;

  constructor(
    private readonly caps: BudgetCaps,
    private readonly state: RunStateStore,
    /** seconds of the phase in progress not yet in state.json */
    private readonly currentPhaseSeconds: () => number,
    private readonly resumeHint: string,
    private readonly tokens: TokenBudget | null = null,
  ) {}

  /** one training or pilot step of an arm, as charged */
  stepTokens(arm: string): TokenCount {
    return this.tokens?.charges.step[arm] ?? NONE;
  }

  /** one model's evaluation, as charged */
  evaluationTokens(): TokenCount {
    return this.tokens?.charges.evaluation ?? NONE;
  }

  /** the tokens charged so far, all phases and attempts */
  chargedTokens(): TokenCount {
    return Object.values(this.state.state.tokensCharged ?? {}).reduce((s, t) => plus(s, t), NONE);
  }

  // spent = sum of state.json's wall seconds per phase (every attempt) + the phase in progress
  spentSeconds(): number {
    return Object.values(this.state.state.wallSeconds).reduce((s, x) => s + (x ?? 0), 0) + this.currentPhaseSeconds();
  }

  /** "spent 3.20 / 120 min" for the progress lines */
  line(): string {
    const wall = `budget ${(this.spentSeconds() / 60).toFixed(2)} / ${this.caps.max_wall_minutes} min`;
    const tokens = this.tokens && this.caps.max_tokens !== undefined ? `, ${count(tokenSum(this.chargedTokens()))} / ${count(this.caps.max_tokens)} tokens` : '';
    const usd = this.tokens?.price && this.caps.max_usd !== undefined ? `, $${usdOfTokens(this.chargedTokens(), this.tokens.price).toFixed(2)} / $${this.caps.max_usd}` : '';
    return wall + tokens + usd;
  }

  // stop when spent + next > max_wall_minutes * 60 (once one unit found it, every later check stops too)
  // and when charged + next > max_tokens, or their price > max_usd; a unit that passes is charged (state.json)
  check(unit: string, nextSeconds: number, phase: RunStopped['phase'], nextTokens: TokenCount = NONE): void {
    if (this.exceeded) throw new BudgetExceeded(this.exceeded, phase);
    const spent = this.spentSeconds();
    const cap = this.caps.max_wall_minutes * 60;
    if (spent + nextSeconds > cap) {
      this.stop(`${minutes(spent)} of the ${this.caps.max_wall_minutes} wall minutes spent; the next unit, ${unit} (about ${minutes(nextSeconds)}), would pass it`, phase);
    }
    if (!this.tokens) return;
    // the fixed work (shared init, preflight, held-out draws, dev curve) is charged with the run's first unit
    const next = this.state.state.tokensCharged === undefined ? plus(nextTokens, this.tokens.charges.fixed) : nextTokens;
    const charged = this.chargedTokens();
    const after = plus(charged, next);
    if (this.caps.max_tokens !== undefined && tokenSum(after) > this.caps.max_tokens) {
      this.stop(`${count(tokenSum(charged))} of the ${count(this.caps.max_tokens)} tokens charged (as rx plan counts them); the next unit, ${unit} (${count(tokenSum(next))} tokens), would pass it`, phase);
    }
    const price = this.tokens.price;
    if (price && this.caps.max_usd !== undefined && usdOfTokens(after, price) > this.caps.max_usd) {
      this.stop(`$${usdOfTokens(charged, price).toFixed(2)} of the $${this.caps.max_usd} charged (${price.source}, ${price.date}); the next unit, ${unit} ($${usdOfTokens(next, price).toFixed(2)}), would pass it`, phase);
    }
    this.state.chargeTokens(phase, next);
  }

  private stop(figures: string, phase: RunStopped['phase']): never {
    this.exceeded = `${BUDGET_STOP} ${figures}; raise it with ${this.resumeHint}`;
    throw new BudgetExceeded(this.exceeded, phase);
  }
}
