import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { RunDir, RunStateStore, writeRunFile } from '@rx/run-dir';
import { loadSpecText, type ExperimentSpec } from '@rx/spec';
import { readFileSync } from 'node:fs';
import { REPO_ROOT } from '../infra/repo-root';
import { BUDGET_STOP, BudgetExceeded, BudgetGuard, budgetInForce } from './budget-guard';

const spec = (() => {
  const r = loadSpecText(readFileSync(path.join(REPO_ROOT, 'specs', 'embedded.json'), 'utf8'));
  if (!r.ok) throw new Error(r.errors.join('\n'));
  return r.spec as ExperimentSpec;
})();

describe('BudgetGuard', () => {
  let root: string;
  beforeEach(() => (root = mkdtempSync(path.join(tmpdir(), 'rx-budget-'))));
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  it('counts every phase of every attempt plus the phase in progress, and stops before the unit that would pass the cap', () => {
    const dir = new RunDir(root);
    const state = RunStateStore.create(dir, 'r');
    state.addWall('setup', 30);
    state.addWall('pilot', 60);
    let inPhase = 20;
    const guard = new BudgetGuard({ gpu_hours: 1, max_wall_minutes: 2 }, state, () => inPhase, 'rx run --resume X --override raise-budget.json');
    expect(guard.spentSeconds()).toBe(110);
    expect(guard.line()).toBe('budget 1.83 / 2 min');
    expect(() => guard.check('train step 3 of a', 10, 'training')).not.toThrow(); // 110 + 10 = 120: at the cap, not past it
    inPhase = 21;
    let err: unknown = null;
    try {
      guard.check('train step 4 of a', 10, 'training');
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(BudgetExceeded);
    expect((err as BudgetExceeded).phase).toBe('training');
    expect((err as Error).message).toBe(`${BUDGET_STOP} 1.85 min of the 2 wall minutes spent; the next unit, train step 4 of a (about 0.17 min), would pass it; raise it with rx run --resume X --override raise-budget.json`);
    // once exceeded, the other arm's next check stops too, whatever its estimate
    expect(() => guard.check('train step 4 of b', 0, 'training')).toThrow(BudgetExceeded);
  });

  it('is the spec budget until a revision raises it', () => {
    const dir = new RunDir(root);
    expect(budgetInForce(dir, spec)).toEqual({ caps: { gpu_hours: 2, max_wall_minutes: 120 }, revision: 0 });
    const rev = { number: 1, at: new Date().toISOString(), from: { gpu_hours: 2, max_wall_minutes: 120 }, to: { gpu_hours: 2, max_wall_minutes: 300 }, source: 'r.json', sha256: 'x', lifts: null };
    writeRunFile(dir, 'budget-revisions.json', { revisions: [rev] });
    expect(budgetInForce(dir, spec)).toEqual({ caps: { gpu_hours: 2, max_wall_minutes: 300 }, revision: 1 });
  });
});
