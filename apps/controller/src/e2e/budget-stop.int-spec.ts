// The budget holds during the run, as a user meets it: `rx run` on the embedded experiment (reduced to 2 training
// steps per arm, 16 eval items) with a token budget too small for its training stops before the first step past it
// (exit 5, status "stopped" with reason "budget: ...", the state kept), and `rx run --resume DIR --override
// raise.json` raises it (a recorded revision) and ends with the decision and eval files of the same run left
// uninterrupted; `rx plan --from-run` on the uninterrupted run takes its discordance from its eval files. Tokens are charged as rx plan counts them, so the stop lands on the same step on any machine: the
// cap is the uninterrupted run's charge up to its first training step of each arm (state.json tokensCharged).
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { tokenSum } from '@rx/plan';
import { readRunFile, RunDir } from '@rx/run-dir';
import { runRx } from './rx-cli.e2e-helper';
import { REPO_ROOT } from '../infra/repo-root';

jest.setTimeout(1_200_000);
const RUN_DEADLINE_MS = 420_000;

const CHECKPOINT = path.join(REPO_ROOT, 'models', 'char-lm');
const haveModel = existsSync(CHECKPOINT);
if (!haveModel) console.warn(`budget e2e: the embedded checkpoint ${CHECKPOINT} is not in the tree; SKIPPED`);

const rx = (args: string[]) => runRx(args, { deadlineMs: RUN_DEADLINE_MS });

const sha256 = (file: string) => createHash('sha256').update(readFileSync(file)).digest('hex');

/** what must not change when the run is stopped by its budget and resumed: the eval files, the decision, the verdict */
function outcomeOf(root: string): Record<string, unknown> {
  const dir = new RunDir(root);
  const { n, effect, lower, upper, outcome, wins_treatment, wins_baseline } = readRunFile(dir, 'decision-summary.json');
  const evals = Object.fromEntries(['base', 'gs1_kernel', 'grpo_gs8'].map((m) => [m, sha256(dir.evalFile(m))]));
  return { decision: { n, effect, lower, upper, outcome, wins_treatment, wins_baseline }, evals, verdict: readRunFile(dir, 'record.json').verdict.outcome };
}

(haveModel ? describe : describe.skip)('the budget during the run (embedded, 2 steps per arm)', () => {
  let work: string;
  beforeAll(() => (work = mkdtempSync(path.join(tmpdir(), 'rx-budget-e2e-'))));
  afterAll(() => rmSync(work, { recursive: true, force: true }));

  it('stops before the first training step past a token cap, exit 5, and resumes with a raised budget to the uninterrupted decision', async () => {
    const reduced = { steps: 2, dataset: { n_examples: 128 }, eval: { n_examples: 16 }, feasibility: { effective_config: { steps: 2, n_eval: 16 } } };
    const plainOverride = path.join(work, 'reduced.json');
    writeFileSync(plainOverride, JSON.stringify(reduced));
    const plain = path.join(work, 'uninterrupted');
    const a = await rx(['run', '--spec', 'specs/embedded.json', '--override', plainOverride, '--out', plain, '--port', '0']);
    if (a.status !== 0) throw new Error(`the uninterrupted rx run exited ${a.status}\n${a.output.slice(-6000)}`);
    // rx plan --from-run on this real run directory: its discordance from the arms' eval files, said so
    const only = (() => {
      const correct = (m: string) => new Map(readFileSync(new RunDir(plain).evalFile(m), 'utf8').trim().split('\n').map((l) => JSON.parse(l) as { item_id: string; correct: boolean }).map((l) => [l.item_id, l.correct]));
      const [t, b] = [correct('gs1_kernel'), correct('grpo_gs8')];
      return [...t].filter(([id, c]) => b.get(id) !== c).length;
    })();
    const planned = await rx(['plan', 'specs/embedded.json', '--from-run', plain, '--json']);
    expect(planned.status).toBe(0);
    expect(JSON.parse(planned.output).discordance).toEqual({ rate: only / 16, source: `from ${plain}'s evaluation: ${only} of 16 items right under one arm only` });

    const charged = readRunFile(new RunDir(plain), 'state.json').tokensCharged!;
    // 2 steps of each arm in training: the cap leaves room for the pilot (with the fixed work) and one step of each
    const cap = tokenSum(charged.pilot!) + tokenSum(charged.training!) / 2;
    expect(Number.isInteger(cap)).toBe(true);

    const cappedOverride = path.join(work, 'capped.json');
    writeFileSync(cappedOverride, JSON.stringify({ ...reduced, budget: { max_tokens: cap } }));
    const out = path.join(work, 'capped');
    const b = await rx(['run', '--spec', 'specs/embedded.json', '--override', cappedOverride, '--out', out, '--port', '0']);
    expect([b.status, b.output.slice(-3000)]).toEqual([5, expect.stringContaining('budget:')]);
    const state = readRunFile(new RunDir(out), 'state.json');
    expect(state.status).toBe('stopped');
    expect(state.reason).toMatch(new RegExp(`^budget: ${cap.toLocaleString('en-US')} of the ${cap.toLocaleString('en-US')} tokens charged \\(as rx plan counts them\\); the next unit, train step 2 of (gs1_kernel|grpo_gs8) \\(\\d[\\d,]* tokens\\), would pass it; raise it with rx run --resume ${out.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} --override raise-budget.json$`));
    // stopped at the first step past it: one step of each arm done and kept, nothing evaluated
    expect(Object.fromEntries(Object.entries(state.arms).map(([arm, s]) => [arm, s.stepsDone]))).toEqual({ gs1_kernel: 1, grpo_gs8: 1 });
    expect(tokenSum(Object.values(state.tokensCharged!).reduce((s, t) => ({ sampled: s.sampled + t.sampled, prefill: s.prefill + t.prefill, trained: s.trained + t.trained })))).toBe(cap);
    expect(existsSync(path.join(out, 'decision-summary.json'))).toBe(false);
    expect(b.output).toMatch(/tokens/);

    // a plain resume keeps it stopped; the raise continues it
    const still = await rx(['run', '--resume', out]);
    expect(still.output).toContain('was stopped by its budget');
    const raise = path.join(work, 'raise-budget.json');
    writeFileSync(raise, JSON.stringify({ budget: { max_tokens: 10 * cap } }));
    const c = await rx(['run', '--resume', out, '--override', raise]);
    if (c.status !== 0) throw new Error(`the resume with the raised budget exited ${c.status}\n${c.output.slice(-6000)}`);
    const revisions = readRunFile(new RunDir(out), 'budget-revisions.json').revisions;
    expect(revisions.map((r) => [r.number, r.from.max_tokens, r.to.max_tokens, r.lifts])).toEqual([[1, cap, 10 * cap, state.reason]]);
    expect(outcomeOf(out)).toEqual(outcomeOf(plain));
  });
});
