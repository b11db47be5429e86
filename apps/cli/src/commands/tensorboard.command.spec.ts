// Spawns the real CLI (`node -r tools/register.js apps/cli/src/main.ts tensorboard …`) on synthetic run directories.
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { writeSyntheticRun } from '@rx/report/testing';
import { readEventFile, scalarsByTag } from '@rx/tensorboard/testing';

const ROOT = path.resolve(__dirname, '../../../..');
jest.setTimeout(60_000);

function rx(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, ['-r', './tools/register.js', 'apps/cli/src/main.ts', ...args], { cwd: ROOT, timeout: 30_000 }, (err, stdout, stderr) => {
      resolve({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, stdout, stderr });
    });
  });
}

const eventFile = (dir: string): string => path.join(dir, readdirSync(dir).find((f) => f.includes('tfevents'))!);

describe('rx tensorboard', () => {
  let work: string;
  beforeAll(() => {
    work = mkdtempSync(path.join(tmpdir(), 'rx-tensorboard-cli-'));
  });
  afterAll(() => rmSync(work, { recursive: true, force: true }));

  it('writes <run dir>/tensorboard, says what it wrote and how to open it', async () => {
    const fx = writeSyntheticRun(path.join(work, 'run'), { steps: 3, evalItems: 10 });
    const r = await rx(['tensorboard', fx.root]);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const out = path.join(fx.root, 'tensorboard');
    const lines = r.stdout.trim().split('\n');
    expect(lines[0]).toBe(`wrote ${out} (6 TensorBoard runs)`);
    expect(lines).toContain(`open it with: tensorboard --logdir ${out}`);
    expect(lines.find((l) => l.startsWith(`  ${fx.treatment}:`))).toMatch(/^ {2}\S+: \d+ scalars over 4 steps$/);
    const scalars = scalarsByTag(readEventFile(eventFile(path.join(out, fx.treatment))));
    expect(scalars.get('env/all/reward/total')!.map(([step]) => step)).toEqual([0, 1, 2]);
    expect(scalars.get('dev/accuracy')!.map(([step]) => step)).toEqual([0, 3]);
  });

  it('rx export <run dir> --tensorboard DIR writes the same files into DIR, in the CLI process (no controller: no exchange record)', async () => {
    const fx = writeSyntheticRun(path.join(work, 'run2'), { steps: 2, evalItems: 10 });
    const out = path.join(work, 'tb-out');
    const r = await rx(['export', fx.root, '--tensorboard', out]);
    expect([r.code, r.stderr]).toEqual([0, '']);
    expect(r.stdout.split('\n')[0]).toBe(`wrote ${out} (6 TensorBoard runs)`);
    expect(scalarsByTag(readEventFile(eventFile(path.join(out, fx.baseline)))).get('rx/frac_reward_zero_std')).toHaveLength(2);
    expect(existsSync(path.join(fx.root, 'exchange'))).toBe(false);
  });

  it('refuses a missing directory, a directory that is no run, and wrong arguments, in one line, exit 2', async () => {
    const missing = path.join(work, 'nowhere');
    const cases: Array<[string[], RegExp]> = [
      [['tensorboard', missing], new RegExp(`^rx: no run directory at ${missing.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}: pass the --out directory of an rx run\\n$`)],
      [['tensorboard', work], /^rx: .* is not a run directory \(no run\.json or record\.json\): pass the --out directory of an rx run\n$/],
      [['tensorboard'], /^rx: expected one run directory, got 0; usage: rx tensorboard <run dir> \[--out DIR\]\n$/],
      [['tensorboard', work, '--bogus'], /^rx: Unknown option '--bogus'.*; usage: rx tensorboard <run dir> \[--out DIR\]\n$/],
      [['export', missing, '--tensorboard', 'a', 'b'], /^rx: expected a run directory and at most one output directory, got 3 arguments; usage: rx export <run dir> --tensorboard \[DIR\]\n$/],
      [['export', missing, '--tensorboard'], /^rx: no run directory at /],
    ];
    for (const [args, expected] of cases) {
      const r = await rx(args);
      expect({ args, code: r.code, stderr: r.stderr }).toEqual({ args, code: 2, stderr: expect.stringMatching(expected) });
    }
  });
});
