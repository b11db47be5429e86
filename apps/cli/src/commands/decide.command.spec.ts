// Spawns the real CLI (`node -r tools/register.js apps/cli/src/main.ts decide …`) on temporary files.
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import * as path from 'node:path';

const ROOT = path.resolve(__dirname, '../../../..');
// alpha 0.05, bounds [0, 1], weights +1/-1, margin -0.03: the published rule
const SPEC = path.join(ROOT, 'specs/embedded.json');

function rx(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, ['-r', './tools/register.js', 'apps/cli/src/main.ts', ...args], { cwd: ROOT, timeout: 30_000 }, (err, stdout, stderr) => {
      resolve({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, stdout, stderr });
    });
  });
}

const jsonl = (rows: Array<[string | number, unknown]>) => rows.map(([id, correct]) => JSON.stringify({ item_id: id, correct })).join('\n') + '\n';

describe('rx decide', () => {
  let dir: string;
  const file = async (name: string, text: string) => {
    const p = path.join(dir, name);
    await writeFile(p, text);
    return p;
  };
  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'rx-decide-'));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });
  /** the embedded spec with an evaluation set of n items (the decision is pre-registered for eval.n_examples) */
  const specFor = async (n: number): Promise<string> => {
    const spec = JSON.parse(await readFile(SPEC, 'utf8'));
    spec.eval.n_examples = n;
    if (spec.feasibility?.effective_config) spec.feasibility.effective_config.n_eval = n;
    return file(`spec-n${n}.json`, JSON.stringify(spec));
  };

  it("scores under the spec's pre-registered bound, and --all-bounds labels the others exploratory (the published pairs)", async () => {
    // 152 items only the treatment gets right, 112 only the baseline, 1055 concordant
    const rows = (arm: 't' | 'b') =>
      Array.from({ length: 1319 }, (_, i): [string, boolean] => [`gsm8k_test_${i}`, i < 152 ? arm === 't' : i < 264 ? arm === 'b' : i % 2 === 0]);
    const t = await file('pub-t.jsonl', jsonl(rows('t')));
    const b = await file('pub-b.jsonl', jsonl(rows('b')));
    const published = await rx(['decide', '--spec', path.join(ROOT, 'specs/gs1-vs-grpo.json'), '--treatment', t, '--baseline', b]);
    expect(published.stderr).toBe('');
    expect(JSON.parse(published.stdout)).toMatchObject({ n: 1319, wins_treatment: 152, wins_baseline: 112, outcome: 'inconclusive' });
    expect(JSON.parse(published.stdout).lower).toBeCloseTo(-0.03707, 5);
    const eb = await rx(['decide', '--spec', path.join(ROOT, 'specs/gs1-vs-grpo-eb.json'), '--treatment', t, '--baseline', b]);
    expect(JSON.parse(eb.stdout).lower).toBeCloseTo(-0.01613, 5);
    expect(JSON.parse(eb.stdout).outcome).toBe('supported');
    const all = await rx(['decide', '--spec', path.join(ROOT, 'specs/gs1-vs-grpo.json'), '--treatment', t, '--baseline', b, '--all-bounds']);
    const lines = all.stdout.trimEnd().split('\n').map((l) => JSON.parse(l));
    expect(lines.map((l) => [l.bound, l.role])).toEqual([
      ['hoeffding', 'pre-registered'],
      ['empirical_bernstein', 'exploratory'],
      ['betting', 'exploratory'],
    ]);
    expect(lines[0].lower).toBeCloseTo(-0.03707, 5);
    expect(lines[1].lower).toBeCloseTo(-0.01613, 5);
    expect(lines[2].lower).toBeGreaterThan(lines[2].effect - 0.0674);
  });

  it('pairs by item_id and prints the Hoeffding decision', async () => {
    const t = await file('t.jsonl', jsonl([['q1', true], ['q2', true], ['q3', false], ['q4', true]]));
    // baseline in another order: q4 wrong, q3 wrong, q2 right, q1 wrong -> d = [1, 0, 0, 1]
    const b = await file('b.jsonl', jsonl([['q4', false], ['q3', false], ['q2', true], ['q1', false]]));
    const r = await rx(['decide', '--spec', await specFor(4), '--treatment', t, '--baseline', b]);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const lines = r.stdout.trimEnd().split('\n');
    expect(lines).toHaveLength(1);
    const out = JSON.parse(lines[0]);
    expect(Object.keys(out)).toEqual(['n', 'effect', 'halfwidth', 'lower', 'upper', 'wins_treatment', 'wins_baseline', 'supported', 'outcome']);
    // halfwidth = 2 sqrt(ln 20 / 8)
    expect(out.n).toBe(4);
    expect(out.effect).toBe(0.5);
    expect(out.halfwidth).toBeCloseTo(1.2238734, 6);
    expect(out.lower).toBeCloseTo(-0.7238734, 6);
    expect(out.upper).toBeCloseTo(1.7238734, 6);
    expect(out).toMatchObject({ wins_treatment: 2, wins_baseline: 0, supported: false, outcome: 'inconclusive' });
  });

  it('is supported for a clear treatment win', async () => {
    const ids = Array.from({ length: 200 }, (_, i) => i);
    const t = await file('t-win.jsonl', jsonl(ids.map((i) => [i, true])));
    const b = await file('b-win.jsonl', jsonl(ids.map((i) => [i, i % 2 === 0])));
    const r = await rx(['decide', '--spec', await specFor(200), '--treatment', t, '--baseline', b]);
    expect(r.code).toBe(0);
    // effect 0.5, halfwidth 2 sqrt(ln 20 / 400) = 0.17308
    expect(JSON.parse(r.stdout)).toMatchObject({ n: 200, effect: 0.5, wins_treatment: 100, wins_baseline: 0, supported: true, outcome: 'supported' });
  });

  it.each<[string, string, string, (t: string, b: string) => string]>([
    ['differing item sets', jsonl([['a', true], ['b', true]]), jsonl([['a', true], ['c', false]]), (t, b) => `rx: item sets differ: 1 only in ${t} (item_id "b" line 2); 1 only in ${b} (item_id "c" line 2)\n`],
    ['a duplicate item', jsonl([['a', true], ['b', true]]), jsonl([['a', true], ['b', false], ['a', false]]), (_t, b) => `rx: ${b}:3: duplicate item_id "a" (first on line 1)\n`],
    ['a non-boolean value', jsonl([['a', true], ['b', 1]]), jsonl([['a', true], ['b', false]]), (t) => `rx: ${t}:2: correct must be true or false, got 1\n`],
    ['a line that is not JSON', '{"item_id":"a","correct":true}\n{oops\n', jsonl([['a', true]]), (t) => `rx: ${t}:2: not valid JSON\n`],
  ])('exits 2 on %s, naming file and line', async (name, tText, bText, message) => {
    const slug = name.replace(/\W+/g, '-');
    const t = await file(`t-${slug}.jsonl`, tText);
    const b = await file(`b-${slug}.jsonl`, bText);
    const r = await rx(['decide', '--spec', SPEC, '--treatment', t, '--baseline', b]);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toBe(message(t, b));
  });

  it('refuses the same file as both arms, and files of another n than the spec pre-registers', async () => {
    const t = await file('t-same.jsonl', jsonl([['a', true], ['b', false]]));
    const same = await rx(['decide', '--spec', await specFor(2), '--treatment', t, '--baseline', path.join(dir, '.', 't-same.jsonl')]);
    expect([same.code, same.stdout]).toEqual([2, '']);
    expect(same.stderr).toBe(`rx: --treatment and --baseline are the same file (${t}): give each arm's own evaluation file\n`);
    const b = await file('b-n.jsonl', jsonl([['a', false], ['b', false]]));
    const otherN = await rx(['decide', '--spec', await specFor(3), '--treatment', t, '--baseline', b]);
    expect([otherN.code, otherN.stdout]).toEqual([2, '']);
    expect(otherN.stderr).toBe("rx: the files pair 2 items, but the spec's eval.n_examples is 3: decide on the whole pre-registered evaluation set\n");
    // the same files against a spec of their n: a decision
    expect((await rx(['decide', '--spec', await specFor(2), '--treatment', t, '--baseline', b])).code).toBe(0);
  });

  it('exits 2 with one line for a missing flag or file', async () => {
    const t = await file('t-ok.jsonl', jsonl([['a', true]]));
    const noFlag = await rx(['decide', '--spec', SPEC, '--treatment', t]);
    expect(noFlag.code).toBe(2);
    expect(noFlag.stderr).toBe('rx: --baseline is required; usage: rx decide --spec <spec.json> --treatment a.jsonl --baseline b.jsonl [--all-bounds]\n');
    const missing = path.join(dir, 'missing.jsonl');
    const noFile = await rx(['decide', '--spec', SPEC, '--treatment', t, '--baseline', missing]);
    expect(noFile.code).toBe(2);
    expect(noFile.stderr).toBe(`rx: cannot read the baseline file ${missing}: no such file\n`);
  });

  it('refuses an invalid spec with its path-named errors', async () => {
    const spec = await file('spec.json', JSON.stringify({ title: 'x' }));
    const t = await file('t-spec.jsonl', jsonl([['a', true]]));
    const r = await rx(['decide', '--spec', spec, '--treatment', t, '--baseline', t]);
    expect(r.code).toBe(2);
    expect(r.stderr.split('\n')[0]).toMatch(/^rx: .*spec\.json: invalid spec \(\d+ errors\)$/);
    expect(r.stderr).toContain('  decision_rule: required: a spec must pre-register its decision rule\n');
  });
});
