// The budget holds during the run: before each training step (pilot steps too) and each model's evaluation, the wall
// time spent so far (every attempt's phases, state.json) plus the next unit (as long as the last one took) is
// compared with the budget in force (the spec's, or the last raise in budget-revisions.json). When it would pass it,
// the run stops cleanly: state kept, status "stopped" with reason "budget: <figures>", exit 5; `rx run --resume DIR
// --override raise-budget.json` raises it (recorded as a revision) and continues where it stopped.
import { readRunFileIfExists, type BudgetCaps, type RunDir, type RunStateStore } from '@rx/run-dir';
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

const minutes = (seconds: number) => `${(seconds / 60).toFixed(2)} min`;

export class BudgetGuard {
  private exceeded: string | null = null;

  constructor(
    private readonly caps: BudgetCaps,
    private readonly state: RunStateStore,
    /** seconds of the phase in progress not yet in state.json */
    private readonly currentPhaseSeconds: () => number,
    private readonly resumeHint: string,
  ) {}

  // spent = sum of state.json's wall seconds per phase (every attempt) + the phase in progress
  spentSeconds(): number {
    return Object.values(this.state.state.wallSeconds).reduce((s, x) => s + (x ?? 0), 0) + this.currentPhaseSeconds();
  }

  /** "spent 3.20 / 120 min" for the progress lines */
  line(): string {
    return `budget ${(this.spentSeconds() / 60).toFixed(2)} / ${this.caps.max_wall_minutes} min`;
  }

  // stop when spent + next > max_wall_minutes * 60 (once one unit found it, every later check stops too)
  check(unit: string, nextSeconds: number, phase: RunStopped['phase']): void {
    if (this.exceeded) throw new BudgetExceeded(this.exceeded, phase);
    const spent = this.spentSeconds();
    const cap = this.caps.max_wall_minutes * 60;
    if (spent + nextSeconds > cap) {
      this.exceeded = `${BUDGET_STOP} ${minutes(spent)} of the ${this.caps.max_wall_minutes} wall minutes spent; the next unit, ${unit} (about ${minutes(nextSeconds)}), would pass it; raise it with ${this.resumeHint}`;
      throw new BudgetExceeded(this.exceeded, phase);
    }
  }
}
