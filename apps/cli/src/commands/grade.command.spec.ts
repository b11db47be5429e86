// Spawns the real CLI (`node -r tools/register.js apps/cli/src/main.ts grade …`) on temporary files.
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import * as path from 'node:path';

const ROOT = path.resolve(__dirname, '../../../..');

function rx(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, ['-r', './tools/register.js', 'apps/cli/src/main.ts', ...args], { cwd: ROOT, timeout: 30_000 }, (err, stdout, stderr) => {
      resolve({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, stdout, stderr });
    });
  });
}

const ANSWER = 'Janet sells 16 - 3 - 4 = <<16-3-4=9>>9 duck eggs a day.\nShe makes 9 * 2 = $<<9*2=18>>18.\n#### 18';

describe('rx grade', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'rx-grade-'));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });
  async function file(name: string, lines: string[]): Promise<string> {
    const p = path.join(dir, name);
    await writeFile(p, lines.join('\n') + '\n');
    return p;
  }

  it('grades each line in order with the env reward', async () => {
    const input = await file('ok.jsonl', [
      JSON.stringify({ completion: 'She makes \\boxed{18} dollars.', answer: ANSWER }),
      JSON.stringify({ completion: '\\boxed{\\$18.00}', answer: ANSWER, ended_on_stop: false }),
      JSON.stringify({ completion: '\\boxed{17}', answer: ANSWER }),
      '',
      JSON.stringify({ completion: 'no box, 18', answer: ANSWER }),
      JSON.stringify({ completion: '\\boxed{18}}', answer: ANSWER }),
      JSON.stringify({ completion: '\\boxed{1,000}', answer: '...\n#### 1,000', ended_on_stop: true }),
    ]);
    const r = await rx(['grade', '--input', input]);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout.trim().split('\n').map((l) => JSON.parse(l))).toEqual([
      { correct: true, extracted: '18', reward: 1 },
      { correct: true, extracted: '\\$18.00', reward: 0.1 * (0 - 1) + 1 },
      { correct: false, extracted: '17', reward: 0 },
      { correct: false, extracted: null, reward: -0.1 },
      { correct: false, extracted: null, reward: -0.1 },
      { correct: true, extracted: '1,000', reward: 1 },
    ]);
  });

  it.each([
    ['not JSON', '{"completion": ', /line 2: not valid JSON/],
    ['a missing answer', JSON.stringify({ completion: 'x' }), /line 2: 'answer' required/],
    ['a non-string completion', JSON.stringify({ completion: 18, answer: ANSWER }), /line 2: 'completion' expected string/],
    ['a non-boolean ended_on_stop', JSON.stringify({ completion: 'x', answer: ANSWER, ended_on_stop: 'yes' }), /line 2: 'ended_on_stop' expected boolean/],
    ['an answer without ####', JSON.stringify({ completion: 'x', answer: 'The answer is 18' }), /line 2: 'answer' has no "#### <final answer>" line/],
  ])('exits 2 naming the line for %s', async (_what, bad, message) => {
    const input = await file('bad.jsonl', [JSON.stringify({ completion: '\\boxed{18}', answer: ANSWER }), bad]);
    const r = await rx(['grade', '--input', input]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(message);
    expect(r.stderr).toContain(input);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(r.stdout).toBe('');
  });

  it('exits 2 on a missing --input or an unreadable file', async () => {
    const none = await rx(['grade']);
    expect(none.code).toBe(2);
    expect(none.stderr).toMatch(/--input is required/);
    const missing = await rx(['grade', '--input', path.join(dir, 'nope.jsonl')]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/cannot read --input .*nope\.jsonl \(ENOENT\)/);
    const unknown = await rx(['grade', '--input', 'x', '--frobnicate']);
    expect(unknown.code).toBe(2);
  });
});
