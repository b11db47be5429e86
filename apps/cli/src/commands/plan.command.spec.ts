// Spawns the real CLI (`node -r tools/register.js apps/cli/src/main.ts plan …`): no controller, no Redis.
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { writeSyntheticRun } from '@rx/report/testing';

const ROOT = path.resolve(__dirname, '../../../..');

function rx(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, ['-r', './tools/register.js', 'apps/cli/src/main.ts', ...args], { cwd: ROOT, timeout: 120_000 }, (err, stdout, stderr) => {
      resolve({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, stdout, stderr });
    });
  });
}

describe('rx plan', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'rx-plan-'));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it("prints the published spec's plan as one JSON object with the issue's fields", async () => {
    const r = await rx(['plan', 'specs/gs1-vs-grpo.json', '--json']);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const p = JSON.parse(r.stdout);
    expect([p.n, p.alpha, p.margin]).toEqual([1319, 0.05, -0.03]);
    expect(p.bounds.hoeffding.half_width).toBeCloseTo(0.0674, 4);
    expect(p.bounds.hoeffding.min_effect_noninferior).toBeCloseTo(0.0374, 4);
    expect(p.bounds.empirical_bernstein.half_width).toBeCloseTo(0.0465, 4);
    for (const b of ['hoeffding', 'empirical_bernstein', 'betting']) expect(Object.keys(p.bounds[b].power)).toEqual(['0', '0.01', '0.03', '-0.03']);
    expect(p.discordance.source).toMatch(/^default: the published gs1-vs-grpo run/);
    // P = max_seq_len - max_tokens = 512, S = max_tokens = 512 (upper bounds); the hand count is in libs/plan
    expect(p.cost.tokens).toEqual({ sampled: 5_736_960, prefill: 4_336_640, trained: 5_965_824 });
    expect(p.budget.within).toBe(true);
    expect(p.cost.usd).toBeNull();
  });

  it('exits 3 with one line when the plan exceeds the budget, 2 on a bad flag', async () => {
    const spec = JSON.parse(await readFile(path.join(ROOT, 'specs/gs1-vs-grpo.json'), 'utf8'));
    spec.budget.max_wall_minutes = 5;
    const file = path.join(dir, 'tight.json');
    await writeFile(file, JSON.stringify(spec));
    const r = await rx(['plan', file]);
    expect(r.code).toBe(3);
    expect(r.stderr).toMatch(/^rx: the plan exceeds the spec's budget: wall \d+\.\d min of 5 min\n$/);
    expect(r.stdout).toContain('budget: EXCEEDED');
    const bad = await rx(['plan', 'specs/gs1-vs-grpo.json', '--backend', 'gpu']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/^rx: --backend must be embedded or tinker, got gpu; usage: rx plan/);
  });

  it("--from-run takes the run's discordance from its evaluation and says so", async () => {
    const run = writeSyntheticRun(path.join(dir, 'run'), { steps: 6, evalItems: 80 });
    const only = run.eval[run.treatment].filter((c, i) => c !== run.eval[run.baseline][i]).length;
    const r = await rx(['plan', 'specs/embedded.json', '--from-run', run.root, '--json']);
    expect(r.stderr).toBe('');
    const p = JSON.parse(r.stdout);
    expect(p.discordance.rate).toBe(only / 80);
    expect(p.discordance.source).toBe(`from ${run.root}'s evaluation: ${only} of 80 items right under one arm only`);
    const text = await rx(['plan', 'specs/embedded.json', '--from-run', run.root]);
    expect(text.stdout).toContain(`from ${run.root}'s evaluation`);
    const none = await rx(['plan', 'specs/embedded.json', '--from-run', path.join(dir, 'nothing')]);
    expect(none.code).toBe(2);
    expect(none.stderr).toMatch(/^rx: --from-run .*nothing: no run there/);
  });
});
