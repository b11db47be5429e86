// `rx run --resume DIR --override raise-budget.json`: the one override a run being resumed accepts, a raise of its
// budget ({"budget": {"max_wall_minutes": 240}}, any of the budget's caps). Checked before anything is written: only
// `budget`, every cap at least the one in force, the spec with it still valid. Recorded as a revision in
// budget-revisions.json (before and after, the file and its sha256, the stop it lifts); spec.json is kept.
import { readRunFileIfExists, writeRunFile, type BudgetCaps, type BudgetRevision, type RunDir, type RunState } from '@rx/run-dir';
import { applySpecOverride, type ExperimentSpec, type SpecOverride } from '@rx/spec';
import { budgetInForce } from './budget-guard';
import { RunUserError } from '../composition/run-options';

export function planBudgetRaise(dir: RunDir, spec: ExperimentSpec, state: RunState, file: string, override: SpecOverride, sha256: string): { revision: BudgetRevision; write: () => void } {
  const keys = Object.keys(override);
  const raise = (override as { budget?: unknown }).budget;
  if (keys.length !== 1 || keys[0] !== 'budget' || typeof raise !== 'object' || raise === null || Array.isArray(raise)) {
    throw new RunUserError(`${file}: a resumed run keeps its spec.json; --override with --resume takes only a raise of the budget, {"budget": {"max_wall_minutes": ...}} (it has ${keys.map((k) => JSON.stringify(k)).join(', ') || 'nothing'})`);
  }
  const current = budgetInForce(dir, spec);
  const to = { ...current.caps, ...(raise as Partial<BudgetCaps>) } as BudgetCaps;
  const checked = applySpecOverride(spec, { budget: to } as SpecOverride);
  if (!checked.ok) throw new RunUserError(`${file}: the budget with this raise is invalid (${checked.errors.length} error${checked.errors.length === 1 ? '' : 's'})`, checked.errors);
  for (const k of Object.keys(to) as Array<keyof BudgetCaps>) {
    const before = current.caps[k];
    const after = to[k];
    if (before !== undefined && after !== undefined && after < before) throw new RunUserError(`${file}: budget.${k} ${after} is below the ${before} in force; a resumed run's budget can only be raised`);
  }
  const revisions = readRunFileIfExists(dir, 'budget-revisions.json')?.revisions ?? [];
  const revision: BudgetRevision = { number: current.revision + 1, at: new Date().toISOString(), from: current.caps, to, source: file, sha256, lifts: state.status === 'stopped' ? state.reason : null };
  return { revision, write: () => writeRunFile(dir, 'budget-revisions.json', { revisions: [...revisions, revision] }) };
}
