// Spawns the real CLI (`node -r tools/register.js apps/cli/src/main.ts report …`) on synthetic run directories.
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { writeSyntheticRun } from '@rx/report/testing';

const ROOT = path.resolve(__dirname, '../../../..');
// each case starts a node process (about half a second idle; much more on a loaded machine)
jest.setTimeout(60_000);

function rx(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, ['-r', './tools/register.js', 'apps/cli/src/main.ts', ...args], { cwd: ROOT, timeout: 30_000 }, (err, stdout, stderr) => {
      resolve({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, stdout, stderr });
    });
  });
}

describe('rx report', () => {
  let work: string;
  beforeAll(() => {
    work = mkdtempSync(path.join(tmpdir(), 'rx-report-cli-'));
  });
  afterAll(() => rmSync(work, { recursive: true, force: true }));

  it('writes <run dir>/report.html and says where', async () => {
    const fx = writeSyntheticRun(path.join(work, 'run'), { steps: 3, evalItems: 20 });
    const r = await rx(['report', fx.root]);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const file = path.join(fx.root, 'report.html');
    expect(r.stdout).toMatch(new RegExp(`^wrote ${file.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} \\(16 charts, \\d+ KiB\\)\\n$`));
    const html = readFileSync(file, 'utf8');
    expect(html).toContain('Chart.js v4');
    expect(html).toContain(`<dt>run</dt><dd>${fx.runId}</dd>`);
    expect(html).toContain(`Verdict: ${fx.decision?.outcome}`);
  });

  it('writes the report of a stopped run and lists what it lacks', async () => {
    const fx = writeSyntheticRun(path.join(work, 'stopped'), { scenario: 'stopped' });
    const r = await rx(['report', fx.root]);
    expect(r.code).toBe(0);
    expect(r.stdout.split('\n').slice(1, -1)).toEqual([
      '  note: no training step logs (<arm>/steps.jsonl)',
      '  note: no decision (decision-summary.json)',
      `  note: no ${fx.baseline}/eval.jsonl`,
      `  note: no ${fx.treatment}/eval.jsonl`,
    ]);
    expect(existsSync(path.join(fx.root, 'report.html'))).toBe(true);
  });

  it('refuses a missing directory, a directory that is not a run and a wrong argument count, in one line, exit 2', async () => {
    const missing = path.join(work, 'nowhere');
    const notRun = path.join(work, 'not-a-run');
    mkdirSync(notRun);
    writeFileSync(path.join(notRun, 'notes.txt'), 'hello\n');
    const cases: Array<[string[], string | RegExp]> = [
      [['report', missing], `rx: no run directory at ${missing}: pass the --out directory of an rx run\n`],
      [['report', notRun], `rx: ${notRun} is not a run directory (no run.json or record.json): pass the --out directory of an rx run\n`],
      [['report'], 'rx: expected one run directory, got 0; usage: rx report <run dir>\n'],
      [['report', notRun, missing], 'rx: expected one run directory, got 2; usage: rx report <run dir>\n'],
      [['report', '--html', notRun], /^rx: Unknown option '--html'\..*; usage: rx report <run dir>\n$/],
    ];
    for (const [args, stderr] of cases) {
      const r = await rx(args);
      expect({ args, code: r.code, stdout: r.stdout, stderr: r.stderr }).toEqual({ args, code: 2, stdout: '', stderr: typeof stderr === 'string' ? stderr : expect.stringMatching(stderr) });
      expect(r.stderr.split('\n')).toHaveLength(2);
    }
    expect(existsSync(path.join(notRun, 'report.html'))).toBe(false);
  });

  it('refuses a run directory where nothing is readable in one line, exit 2, and writes no empty report', async () => {
    const garbage = path.join(work, 'garbage');
    mkdirSync(garbage);
    for (const f of ['run.json', 'state.json', 'record.json', 'spec.json']) writeFileSync(path.join(garbage, f), '{ not json');
    const r = await rx(['report', garbage]);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(new RegExp(`^rx: nothing in ${garbage.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} is readable as a run \\(.*run\\.json.*\\); no report was written\n$`));
    expect(existsSync(path.join(garbage, 'report.html'))).toBe(false);
  });
});
