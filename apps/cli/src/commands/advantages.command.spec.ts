// Spawns the real CLI (`node -r tools/register.js apps/cli/src/main.ts advantages …`) on temporary files.
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { kernelBaseline, type ScoredRollout } from '@rx/estimators';

const ROOT = path.resolve(__dirname, '../../../..');

interface Result {
  code: number;
  stdout: string;
  stderr: string;
}

function rx(args: string[]): Promise<Result> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ['-r', './tools/register.js', 'apps/cli/src/main.ts', ...args],
      { cwd: ROOT, timeout: 30_000 },
      (err, stdout, stderr) => {
        const code = err ? (typeof err.code === 'number' ? err.code : 1) : 0;
        resolve({ code, stdout, stderr });
      },
    );
  });
}

interface Line {
  step: number;
  prompt_id: string;
  reward: number;
  phi: [number, number];
}

interface Out {
  baseline: number;
  advantage: number;
  effective_neighbors: number;
  fallback: boolean;
}

function lcg(seed: number): () => number {
  let s = seed;
  return () => {
    s = (s * 48271) % 2147483647;
    return s / 2147483647;
  };
}

function expectClose(actual: number, expected: number): void {
  expect(Math.abs(actual - expected)).toBeLessThanOrEqual(1e-12 * Math.max(1, Math.abs(expected)));
}

describe('rx advantages', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'rx-advantages-'));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  async function write(name: string, content: string): Promise<string> {
    const file = path.join(dir, name);
    await writeFile(file, content);
    return file;
  }

  it('kernel: carries the 256-rollout window across steps', async () => {
    const next = lcg(12345);
    const lines: Line[] = [];
    for (let step = 0; step < 5; step++) {
      for (let k = 0; k < 64; k++) {
        lines.push({
          step,
          prompt_id: `s${step}p${k}`,
          reward: [1, 0, -0.1, 0.9][Math.floor(next() * 4)],
          phi: [Math.log(30 + Math.floor(next() * 300)), -2.5 + 2 * next()],
        });
      }
    }
    const file = await write('kernel.jsonl', lines.map((l) => JSON.stringify(l)).join('\n') + '\n');
    const res = await rx(['advantages', '--estimator', 'kernel', '--input', file]);
    expect(res.stderr).toBe('');
    expect(res.code).toBe(0);
    const out = res.stdout.trim().split('\n').map((l) => JSON.parse(l) as Out);
    expect(out).toHaveLength(320);
    expect(Object.keys(out[0])).toEqual(['baseline', 'advantage', 'effective_neighbors', 'fallback']);

    // the pinned function (checked against its float64 reference in libs/estimators) over the window built here:
    // each step's batch plus all earlier rollouts, most recent first (the 256 cap is the function's)
    const rollouts = lines.map((l, k): ScoredRollout => ({
      rolloutId: String(k),
      step: l.step,
      promptId: l.prompt_id,
      reward: l.reward,
      phi: l.phi,
    }));
    for (let step = 0; step < 5; step++) {
      const batch = rollouts.slice(step * 64, step * 64 + 64);
      const earlier = rollouts.slice(0, step * 64).reverse();
      const expected = kernelBaseline(batch, earlier, { bandwidth: 0.5, windowSize: 256 });
      for (let i = 0; i < 64; i++) {
        const o = out[step * 64 + i];
        expectClose(o.baseline, expected[i].baseline);
        expectClose(o.advantage, expected[i].advantage);
        expectClose(o.effective_neighbors, expected[i].effectiveNeighbors);
        expect(o.fallback).toBe(expected[i].fallback);
      }
    }
    // the window matters: step 4 without its earlier rollouts gives other baselines
    const alone = kernelBaseline(rollouts.slice(256, 320), [], { bandwidth: 0.5 });
    expect(alone.some((a, i) => Math.abs(a.baseline - out[256 + i].baseline) > 1e-3)).toBe(true);
  });

  it('kernel with --bandwidth 1e6 --window 100 gives the leave-one-out mean over the last 100 rollouts', async () => {
    const next = lcg(777);
    const lines: Line[] = Array.from({ length: 120 }, (_, k) => ({
      step: Math.floor(k / 40),
      prompt_id: `p${k}`,
      reward: next() < 0.4 ? 1 : 0,
      phi: [Math.log(20 + k), -1 - next()],
    }));
    const file = await write('flat.jsonl', lines.map((l) => JSON.stringify(l)).join('\n'));
    const res = await rx(['advantages', '--estimator', 'kernel', '--bandwidth', '1e6', '--window', '100', '--input', file]);
    expect(res.code).toBe(0);
    const out = res.stdout.trim().split('\n').map((l) => JSON.parse(l) as Out);
    // step 2 (rollouts 80..119): window = the batch + the 60 most recent of steps 0-1 (rollouts 20..79)
    const windowRewards = lines.slice(20, 120).map((l) => l.reward);
    const total = windowRewards.reduce((s, r) => s + r, 0);
    for (let k = 80; k < 120; k++) {
      expectClose(out[k].baseline, (total - lines[k].reward) / 99);
      expect(out[k].fallback).toBe(false);
    }
    // step 0: only its own 40 rollouts
    const first = lines.slice(0, 40).reduce((s, l) => s + l.reward, 0);
    expectClose(out[0].baseline, (first - lines[0].reward) / 39);
  });

  it('group_mean: groups are the same prompt within a step', async () => {
    const rows = [
      { step: 0, prompt_id: 'a', reward: 1 },
      { step: 0, prompt_id: 'b', reward: 0.9 },
      { step: 0, prompt_id: 'a', reward: 0 },
      { step: 0, prompt_id: 'b', reward: 0.9 },
      { step: 0, prompt_id: 'a', reward: 0 },
      { step: 1, prompt_id: 'a', reward: -0.1 },
      { step: 1, prompt_id: 'a', reward: 1 },
    ];
    const file = await write('gm.jsonl', rows.map((r) => JSON.stringify({ ...r, phi: [4.1, -1.3] })).join('\n') + '\n\n');
    const res = await rx(['advantages', '--estimator', 'group_mean', '--input', file]);
    expect(res.code).toBe(0);
    const out = res.stdout.trim().split('\n').map((l) => JSON.parse(l) as Out);
    const a = 1 / 3;
    const expected = [
      [a, 1 - a, 2],
      [0.9, 0, 1],
      [a, -a, 2],
      [0.9, 0, 1],
      [a, -a, 2],
      [0.45, -0.55, 1],
      [0.45, 0.55, 1],
    ];
    expect(out).toHaveLength(7);
    out.forEach((o, i) => {
      expect(o.baseline).toBeCloseTo(expected[i][0], 14);
      expect(o.advantage).toBeCloseTo(expected[i][1], 14);
      expect(o.effective_neighbors).toBe(expected[i][2]);
      expect(o.fallback).toBe(false);
    });
  });

  it('bad lines and bad flags: exit 2 with one line naming the line number, no stack trace', async () => {
    const good = '{"step":0,"prompt_id":"p1","reward":1,"phi":[4.1,-1.3]}';
    const cases: Array<[string[], RegExp]> = [
      [['--estimator', 'kernel', '--input', await write('json.jsonl', `${good}\n${good}\n{"step":0,\n`)], /json\.jsonl line 3: not valid JSON/],
      [['--estimator', 'kernel', '--input', await write('phi.jsonl', `${good}\n{"step":0,"prompt_id":"p2","reward":1}\n`)], /line 2: 'phi' is required/],
      [['--estimator', 'group_mean', '--input', await write('rw.jsonl', `${good}\n\n{"step":0,"prompt_id":"p2","reward":"1"}\n`)], /line 3: 'reward' expected number/],
      [['--estimator', 'kernel', '--input', await write('ord.jsonl', `{"step":1,"prompt_id":"a","reward":1,"phi":[1,2]}\n${good}\n`)], /line 2: step 0 after step 1/],
      [['--estimator', 'kernel', '--input', await write('one.jsonl', `${good}\n`)], /step 0 \(line 1\): .*at least 2 rollouts/],
      [['--estimator', 'kernel', '--input', path.join(dir, 'missing.jsonl')], /cannot read --input .*missing\.jsonl \(ENOENT\)/],
      [['--estimator', 'ppo', '--input', 'x'], /--estimator must be kernel or group_mean, got 'ppo'/],
      [['--estimator', 'kernel', '--bandwidth', '0', '--input', 'x'], /--bandwidth must be a positive number/],
      [['--estimator', 'kernel', '--bandwidth', '-1', '--input', 'x'], /Option '--bandwidth' argument is ambiguous\. .*use '--bandwidth=-XYZ'; usage/],
      [['--estimator', 'a\nb', '--input', 'x'], /--estimator must be kernel or group_mean, got 'a\\nb'; usage/],
      [['--estimator', 'kernel'], /--input is required/],
      [['--estimator', 'kernel', '--window', '1e300', '--input', 'x'], /--window must be an integer from 2 to 100000, got '1e300'/],
      [
        ['--estimator', 'kernel', '--input', await write('huge.jsonl', `${good}\n{"step":0,"prompt_id":"p2","reward":0,"phi":[1e308,1]}\n{"step":0,"prompt_id":"p3","reward":0,"phi":[1e308,2]}\n`)],
        /huge\.jsonl line \d: the kernel baseline is not a finite number \(phi too large/,
      ],
    ];
    const results = await Promise.all(cases.map(([args]) => rx(['advantages', ...args])));
    results.forEach((res, k) => {
      expect(res.code).toBe(2);
      expect(res.stdout).toBe('');
      expect(res.stderr).toMatch(cases[k][1]);
      expect(res.stderr.trim().split('\n')).toHaveLength(1);
      expect(res.stderr).not.toMatch(/\n\s+at /);
    });
  });
});
