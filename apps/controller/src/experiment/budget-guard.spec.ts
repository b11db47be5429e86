import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { readRunFileIfExists, RunDir, RunStateStore, writeRunFile } from '@rx/run-dir';
import { loadSpecText, type ExperimentSpec } from '@rx/spec';
import { readFileSync } from 'node:fs';
import { REPO_ROOT } from '../infra/repo-root';
import { tokenSum as tokenSumOf } from '@rx/plan';
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

  it('charges tokens unit by unit as rx plan counts them, the fixed work with the first, and stops before the unit that would pass max_tokens or max_usd', () => {
    const dir = new RunDir(root);
    const state = RunStateStore.create(dir, 'r');
    const t = (n: number) => ({ sampled: n, prefill: 2 * n, trained: 3 * n }); // 6 n tokens
    const charges = { fixed: t(10), step: { a: t(5), b: t(1) }, evaluation: t(2), assumptions: { promptTokens: 1, sampledTokens: 1, source: 'test' } };
    const guard = new BudgetGuard({ gpu_hours: 1, max_wall_minutes: 60, max_tokens: 130 }, state, () => 0, 'rx run --resume X --override raise-budget.json', { charges, price: null });
    guard.check('train step 1 of a', 0, 'training', guard.stepTokens('a')); // 60 fixed + 30
    expect(state.state.tokensCharged).toEqual({ training: t(15) });
    expect(guard.line()).toBe('budget 0.00 / 60 min, 90 / 130 tokens');
    guard.check('the evaluation of base', 0, 'evaluation', guard.evaluationTokens()); // 90 + 12 = 102
    guard.check('train step 1 of b', 0, 'training', guard.stepTokens('b')); // 108
    expect(() => guard.check('train step 2 of a', 0, 'training', guard.stepTokens('a'))).toThrow(`${BUDGET_STOP} 108 of the 130 tokens charged (as rx plan counts them); the next unit, train step 2 of a (30 tokens), would pass it; raise it with rx run --resume X --override raise-budget.json`);
    // nothing charged for the unit that did not run; the figures are in state.json for the resume
    expect(guard.chargedTokens()).toEqual(t(18));
    expect(readRunFileIfExists(dir, 'state.json')?.tokensCharged).toEqual({ training: t(16), evaluation: t(2) });
    // a resumed attempt goes on from the charged tokens, without charging the fixed work again
    const resumed = new BudgetGuard({ gpu_hours: 1, max_wall_minutes: 60, max_tokens: 200 }, state, () => 0, 'hint', { charges, price: null });
    resumed.check('train step 2 of a', 0, 'training', resumed.stepTokens('a'));
    expect(tokenSumOf(resumed.chargedTokens())).toBe(138);
    // dollars at 1 $ per prefill token, 2 per sampled, 3 per trained: 138 tokens (23 sampled, 46 prefill, 69 trained) = $299
    const price = { backend: 'tinker' as const, base_model: 'm', usd_per_million: { prefill: 1e6, sample: 2e6, train: 3e6 }, source: 'https://example.test/prices', date: '2026-12-01' };
    const dollars = new BudgetGuard({ gpu_hours: 1, max_wall_minutes: 60, max_usd: 350 }, state, () => 0, 'hint', { charges, price });
    expect(dollars.line()).toBe('budget 0.00 / 60 min, $299.00 / $350');
    expect(() => dollars.check('train step 3 of a', 0, 'training', dollars.stepTokens('a'))).toThrow(`${BUDGET_STOP} $299.00 of the $350 charged (https://example.test/prices, 2026-12-01); the next unit, train step 3 of a ($65.00), would pass it; raise it with hint`);
  });

  it('is the spec budget until a revision raises it', () => {
    const dir = new RunDir(root);
    expect(budgetInForce(dir, spec)).toEqual({ caps: { gpu_hours: 2, max_wall_minutes: 120 }, revision: 0 });
    const rev = { number: 1, at: new Date().toISOString(), from: { gpu_hours: 2, max_wall_minutes: 120 }, to: { gpu_hours: 2, max_wall_minutes: 300 }, source: 'r.json', sha256: 'x', lifts: null };
    writeRunFile(dir, 'budget-revisions.json', { revisions: [rev] });
    expect(budgetInForce(dir, spec)).toEqual({ caps: { gpu_hours: 2, max_wall_minutes: 300 }, revision: 1 });
  });
});
