// Careless input, as real child processes of the CLI: a completed run directory (a short run of the embedded model,
// its services spawned by rx run) is damaged one way at a time (a file missing, garbage, or a directory in its place;
// report.html a directory), and rx status, rx run --resume and rx report must each say what is wrong in one line on
// stderr and exit 2, never a stack trace, and leave every file as it was. rx run --out where no run can be written
// (a regular file, under /dev/null, under /proc) is refused the same way, nothing written. rx status, rx export
// and rx check-record read the run in the CLI's own process: no controller is started (a preload records children).
import { childExit } from '@rx/local-stack/testing';
import { spawn } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';

jest.setTimeout(600_000);

const REPO_ROOT = path.resolve(__dirname, '..', '..', '..', '..');

interface Result {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

function rx(args: string[], timeoutMs = 120_000, env: Record<string, string> = {}): Promise<Result> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['-r', './tools/register.js', 'apps/cli/src/main.ts', ...args], {
      cwd: REPO_ROOT,
      env: { ...process.env, RX_ALLOW_INSECURE_REDIS: '1', RX_BACKEND_URL: '', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    void childExit(child).then(({ code, signal }) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr });
    });
  });
}

/** every file under a directory with its size and mtime, or 'dir' */
function snapshot(root: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (rel: string): void => {
    for (const e of readdirSync(path.join(root, rel), { withFileTypes: true })) {
      const r = path.join(rel, e.name);
      if (e.isDirectory()) {
        out[r] = 'dir';
        walk(r);
      } else {
        const st = statSync(path.join(root, r));
        out[r] = `${st.size}:${st.mtimeMs}`;
      }
    }
  };
  walk('');
  return out;
}

const FILES = ['spec.json', 'state.json', 'run.json', 'evaluation.json', 'decision-summary.json', 'record.json', 'pilot.json'];
type Damage = 'missing' | 'garbage' | 'a directory';
const damages: Array<[string, Damage]> = FILES.flatMap((f) => (['missing', 'garbage', 'a directory'] as const).map((d): [string, Damage] => [f, d]));

function damage(dir: string, file: string, how: Damage): void {
  const p = path.join(dir, file);
  rmSync(p, { recursive: true, force: true });
  if (how === 'garbage') writeFileSync(p, 'TINKER_API_KEY=sk-not-json\x00\xff');
  if (how === 'a directory') mkdirSync(path.join(p, 'inside'), { recursive: true });
}

let work: string;
let complete: string;

beforeAll(async () => {
  work = mkdtempSync(path.join(tmpdir(), 'rx-damaged-'));
  complete = path.join(work, 'complete');
  const override = path.join(work, 'override.json');
  // a short run of an untrained model: the gates' bounds on its rewards are opened, as the run only makes a fixture
  const checks = [
    { metric: 'pilot_mean_reward', min: -1, max: 1 },
    { metric: 'kernel_effective_neighbors_p10', min: 0 },
    { metric: 'baseline_reward_corr', min: -1 },
  ];
  writeFileSync(override, JSON.stringify({ steps: 2, dataset: { n_examples: 128 }, eval: { n_examples: 8 }, feasibility: { effective_config: { steps: 2, n_eval: 8 } }, activation_gate: { checks } }));
  const r = await rx(['run', '--spec', 'specs/embedded.json', '--override', override, '--out', complete, '--port', 'off'], 420_000);
  if (r.code !== 0) throw new Error(`the fixture run failed (${r.code}): ${r.stdout}${r.stderr}`);
  // the services' own data is not part of what is read back; a smaller copy per case
  rmSync(path.join(complete, 'services'), { recursive: true, force: true });
});

afterAll(() => rmSync(work, { recursive: true, force: true }));

function expectOneLineRefusal(r: Result, mentions: string): void {
  expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 2, stderr: expect.stringMatching(/^rx: [^\n]+\n$/) });
  expect(r.stderr).toContain(mentions);
  expect(r.stderr).not.toMatch(/internal error|\n\s+at /);
  // a file's content is never echoed
  expect(r.stderr).not.toContain('sk-not-json');
}

/** runs the cases a few at a time (each is one or more child processes) */
async function inBatches<T>(items: T[], n: number, f: (item: T) => Promise<void>): Promise<void> {
  for (let i = 0; i < items.length; i += n) await Promise.all(items.slice(i, i + n).map(f));
}

describe('a damaged run directory', () => {
  it('the fixture: rx status, rx report and rx run --resume accept the intact run', async () => {
    const dir = path.join(work, 'intact');
    cpSync(complete, dir, { recursive: true });
    const [status, report, resume] = await Promise.all([rx(['status', dir]), rx(['report', dir]), rx(['run', '--resume', dir, '--port', 'off'])]);
    expect([status.code, status.stderr]).toEqual([0, '']);
    expect([report.code, report.stderr]).toEqual([0, '']);
    expect([resume.code, resume.stderr]).toEqual([0, '']);
    expect(resume.stdout).toContain('already complete');
  });

  it('rx run --resume of a complete run whose controller was killed before it exported the exchange record: it is exported, exit 0', async () => {
    const dir = path.join(work, 'not-exported');
    cpSync(complete, dir, { recursive: true });
    rmSync(path.join(dir, 'exchange'), { recursive: true, force: true });
    const resume = await rx(['run', '--resume', dir, '--port', 'off']);
    expect([resume.code, resume.stderr]).toEqual([0, '']);
    expect(resume.stdout).toContain('exchange record: not written by the attempt that finished the run; exporting it now');
    expect(existsSync(path.join(dir, 'exchange', 'record.json'))).toBe(true);
    const check = await rx(['check-record', dir]);
    expect([check.code, check.stderr]).toEqual([0, '']);
  });

  it('rx run --resume of a complete run whose controller was killed before it wrote record.json: the record is written and exported, exit 0', async () => {
    const dir = path.join(work, 'no-record');
    cpSync(complete, dir, { recursive: true });
    const intact = JSON.parse(readFileSync(path.join(complete, 'record.json'), 'utf8')) as { verdict: unknown; decision?: unknown };
    // the attempt ended the run (state complete) and was killed before the record phase wrote record.json
    const stateFile = path.join(dir, 'state.json');
    const state = JSON.parse(readFileSync(stateFile, 'utf8')) as { status: string; completed: string[] };
    expect(state.status).toBe('complete');
    writeFileSync(stateFile, JSON.stringify({ ...state, completed: state.completed.filter((p) => p !== 'record') }, null, 2));
    rmSync(path.join(dir, 'record.json'));
    rmSync(path.join(dir, 'exchange'), { recursive: true, force: true });
    const resume = await rx(['run', '--resume', dir, '--port', 'off']);
    expect([resume.code, resume.stderr]).toEqual([0, '']);
    expect(resume.stdout).toContain('record: not written by the attempt that finished the run; writing it now');
    const rewritten = JSON.parse(readFileSync(path.join(dir, 'record.json'), 'utf8')) as { verdict: unknown; decision?: unknown };
    expect(rewritten.verdict).toEqual(intact.verdict);
    expect(rewritten.decision).toEqual(intact.decision);
    const check = await rx(['check-record', dir]);
    expect([check.code, check.stderr]).toEqual([0, '']);
  });

  it('rx status, rx export and rx check-record read the run in the CLI process: no controller is started (rx run --resume is)', async () => {
    const dir = path.join(work, 'in-process');
    cpSync(complete, dir, { recursive: true });
    const children = (args: string[]) => {
      const log = path.join(work, `children-${args[0]}.log`);
      writeFileSync(log, '');
      const env = { NODE_OPTIONS: `--require ${path.join(REPO_ROOT, 'tools', 'testing', 'record-child-processes.js')}`, RX_TEST_CHILD_LOG: log };
      return rx(args, 120_000, env).then((r) => ({ ...r, children: readFileSync(log, 'utf8').split('\n').filter(Boolean) }));
    };
    const controllerIn = (lines: string[]) => lines.filter((l) => l.includes(path.join('apps', 'controller', 'src', 'main.ts')));
    for (const args of [['status', dir], ['export', dir], ['check-record', dir]]) {
      const r = await children(args);
      expect([args[0], r.code, r.stderr]).toEqual([args[0], 0, '']);
      expect([args[0], controllerIn(r.children)]).toEqual([args[0], []]);
    }
    // the recorder sees a controller where one is started
    const resume = await children(['run', '--resume', dir, '--port', 'off']);
    expect(resume.code).toBe(0);
    expect(controllerIn(resume.children)).toHaveLength(1);
  });

  it.each(['status', 'resume'] as const)('rx %s: each damage is one line on stderr, exit 2, every file untouched', async (command) => {
    const failures: string[] = [];
    await inBatches(damages, 4, async ([file, how]) => {
      const dir = path.join(work, `${command}-${file}-${how.replace(' ', '-')}`);
      cpSync(complete, dir, { recursive: true });
      damage(dir, file, how);
      const before = snapshot(dir);
      const args = command === 'resume' ? ['run', '--resume', dir, '--port', 'off'] : [command, dir];
      const r = await rx(args);
      try {
        expectOneLineRefusal(r, file);
        expect(snapshot(dir)).toEqual(before);
      } catch (err) {
        failures.push(`${file} ${how}: exit ${r.code}: ${r.stderr}${(err as Error).message.slice(0, 400)}`);
      }
      rmSync(dir, { recursive: true, force: true });
    });
    expect(failures).toEqual([]);
  });

  // rx report reads what it can by design (libs/report: a run in progress lacks files, a part it cannot read becomes a
  // note, and record.json repeats most parts): a damaged file is never a stack trace; the report is written (exit 0)
  // or refused in one line (exit 2), and nothing but report.html is written
  it('rx report: each damage is a report or a one-line refusal, never a stack trace; nothing else written', async () => {
    const failures: string[] = [];
    await inBatches(damages, 4, async ([file, how]) => {
      const dir = path.join(work, `report-${file}-${how.replace(' ', '-')}`);
      cpSync(complete, dir, { recursive: true });
      damage(dir, file, how);
      const before = snapshot(dir);
      const r = await rx(['report', dir]);
      try {
        if (r.code === 2) expectOneLineRefusal(r, file);
        else {
          expect([r.code, r.stderr]).toEqual([0, '']);
          expect(r.stdout).not.toContain('sk-not-json');
        }
        const after = snapshot(dir);
        delete after['report.html'];
        delete before['report.html'];
        expect(after).toEqual(before);
      } catch (err) {
        failures.push(`${file} ${how}: exit ${r.code}: ${r.stdout.slice(-600)}${r.stderr}${(err as Error).message.slice(0, 400)}`);
      }
      rmSync(dir, { recursive: true, force: true });
    });
    expect(failures).toEqual([]);
  });

  it('rx report: report.html a directory is one line, exit 2, and no report.html.tmp-* is left', async () => {
    const dir = path.join(work, 'report-html-dir');
    cpSync(complete, dir, { recursive: true });
    mkdirSync(path.join(dir, 'report.html', 'inside'), { recursive: true });
    const before = snapshot(dir);
    const r = await rx(['report', dir]);
    expectOneLineRefusal(r, 'report.html');
    expect(snapshot(dir)).toEqual(before);
    expect(readdirSync(dir).filter((f) => f.startsWith('report.html.tmp-'))).toEqual([]);
  });
});

describe('rx run --out where no run can be written', () => {
  const cases: Array<[string, () => string, string]> = [
    ['a regular file', () => path.join(work, 'a-file'), 'is not a directory'],
    ['under /dev/null', () => '/dev/null/run', '/dev/null is not a directory'],
    ['under a regular file', () => path.join(work, 'a-file', 'run'), 'is not a directory'],
    // root may write anywhere chmod forbids; /proc refuses root too (and Node's recursive mkdir spins there)
    ['under /proc', () => '/proc/rx-no-such-dir/run', '/proc'],
  ];

  it.each(cases)('--out %s: one line, exit 2, nothing written, no spinning', async (_name, out, mentions) => {
    writeFileSync(path.join(work, 'a-file'), 'keep me');
    const started = Date.now();
    const r = await rx(['run', '--spec', 'specs/embedded.json', '--out', out(), '--port', 'off'], 60_000);
    expect(r.signal).toBeNull();
    expectOneLineRefusal(r, mentions);
    expect(Date.now() - started).toBeLessThan(30_000);
    expect(readFileSync(path.join(work, 'a-file'), 'utf8')).toBe('keep me');
    expect(existsSync('/proc/rx-no-such-dir')).toBe(false);
  });
});

describe('a key file given as a spec or an override by mistake', () => {
  it('is refused in one line without printing any of it, nothing written', async () => {
    const key = path.join(work, 'key.txt');
    writeFileSync(key, 'TINKER_API_KEY=sk-not-json');
    const out = path.join(work, 'never');
    for (const args of [['--spec', key], ['--spec', 'specs/embedded.json', '--override', key]]) {
      const r = await rx(['run', ...args, '--out', out, '--port', 'off']);
      expect(r.code).toBe(2);
      expect(r.stderr).toMatch(/invalid JSON: not JSON \(26 characters\)/);
      expect(`${r.stdout}${r.stderr}`).not.toMatch(/sk-not-json|TINKER_API_KEY/);
      expect(existsSync(out)).toBe(false);
    }
  });
});

describe('rx run --services external without RX_BACKEND_URL', () => {
  it('refuses in one line naming the variable before writing anything', async () => {
    const out = path.join(work, 'external');
    const r = await rx(['run', '--spec', 'specs/embedded.json', '--services', 'external', '--out', out, '--port', 'off']);
    expectOneLineRefusal(r, 'RX_BACKEND_URL');
    expect(existsSync(out)).toBe(false);
  });
});
