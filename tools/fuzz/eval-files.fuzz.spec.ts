// Fuzz: the per-item eval files `rx decide` reads ({"item_id": …, "correct": true|false} per line), through
// libs/stats parseItemLines/decidePairedItems: random lines, duplicates, non-boolean answers, huge and
// look-alike ids, mismatched item sets. Either a well-formed Hoeffding result or a PairedItemsError whose one
// line names the file and line; never another error, bounded time.
import { readFile } from 'node:fs/promises';
import * as path from 'node:path';
import fc from 'fast-check';
import { decisionRule, parseSpec } from '@rx/spec';
import { decidePairedItems, parseItemLines, PairedItemsError, type HoeffdingResult, type HoeffdingRule, type ItemFile } from '@rx/stats';
import { REPO_ROOT } from './cli-harness';
import { fuzzParams, tryWithCpuTime } from './fuzz-config';

/** CPU milliseconds one decision over two files may take (1000-line files take about a millisecond). */
const DECIDE_CPU_MS = 250;

const T = 'treatment.jsonl';
const B = 'baseline.jsonl';

// ---- lines ----

const idText = fc.oneof(
  fc.integer({ min: -1000, max: 100_000 }).map(String),
  fc.string({ minLength: 1, maxLength: 12 }).map((s) => JSON.stringify(s)),
  fc.string({ unit: 'binary', minLength: 1, maxLength: 6 }).map((s) => JSON.stringify(s)),
  fc.constantFrom('1e308', '-1e308', '9007199254740993', '9007199254740992', '1.0', '1e2', '"1"', '"001"', '"\\u0000"', `"${'x'.repeat(5000)}"`),
  fc.constant('9'.repeat(400)),
);
const correctText = fc.constantFrom('true', 'false');
const validLine = fc.tuple(idText, correctText, fc.boolean()).map(([id, c, extra]) => `{"item_id": ${id}, "correct": ${c}${extra ? ', "prompt": "a \\"b\\"", "score": 1' : ''}}`);
const badLine = fc.oneof(
  fc.constantFrom(
    '{"item_id": 1, "correct": "true"}',
    '{"item_id": 1, "correct": 1}',
    '{"item_id": 1, "correct": null}',
    '{"item_id": 1}',
    '{"correct": true}',
    '{"item_id": 1.5, "correct": true}',
    '{"item_id": "", "correct": true}',
    '{"item_id": null, "correct": true}',
    '{"item_id": [1], "correct": true}',
    '{"item_id": {"a": 1}, "correct": true}',
    '[1, true]',
    '"item"',
    '42',
    'null',
    '{"item_id": 1, "correct": tru',
    '{"item_id": 1 "correct": true}',
    '\uFEFF{"item_id": 1, "correct": true}',
    '{"item_id": NaN, "correct": true}',
    `{"item_id": 1, "correct": ${'['.repeat(10_000)}`,
  ),
  fc.string({ unit: 'binary', maxLength: 40 }),
  fc.json({ maxDepth: 2 }),
);
const blankLine = fc.constantFrom('', ' ', '\t', '\r');
const anyLine = fc.oneof({ weight: 6, arbitrary: validLine }, { weight: 2, arbitrary: badLine }, { weight: 1, arbitrary: blankLine });

const fileText = (line: fc.Arbitrary<string>, maxLines: number) =>
  fc.tuple(fc.array(line, { maxLength: maxLines }), fc.constantFrom('\n', '\r\n'), fc.boolean()).map(([lines, eol, finalEol]) => lines.join(eol) + (finalEol ? eol : ''));

// ---- checks ----

function expectWellFormed(r: HoeffdingResult, rule: HoeffdingRule): void {
  expect(Number.isInteger(r.n) && r.n >= 1).toBe(true);
  for (const x of [r.effect, r.halfwidth, r.lower, r.upper]) expect(Number.isFinite(x)).toBe(true);
  expect(r.lower).toBeLessThanOrEqual(r.effect);
  expect(r.effect).toBeLessThanOrEqual(r.upper);
  expect(r.winsTreatment + r.winsBaseline).toBeLessThanOrEqual(r.n);
  expect(r.supported).toBe(r.lower > rule.margin);
  expect(r.outcome).toBe(r.supported ? 'supported' : r.upper <= rule.margin ? 'refuted' : 'inconclusive');
}

const escapeRe = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
// "<file>:<line>: …", "<file>: no items", or "item sets differ: … only in <file> (item_id … line N…)"
const LOCATED = new RegExp(`^(${escapeRe(T)}|${escapeRe(B)})(:(\\d+): \\S|: no items$)|^item sets differ: \\d+ only in (${escapeRe(T)}|${escapeRe(B)}) \\(item_id .+ line \\d+`);

/** Runs the decision; returns the error message of a PairedItemsError (anything else fails the test). */
function decide(treatment: ItemFile, baseline: ItemFile, rule: HoeffdingRule): { result?: HoeffdingResult; message?: string } {
  const r = tryWithCpuTime(() => decidePairedItems(treatment, baseline, rule));
  expect(r.cpuMs).toBeLessThan(DECIDE_CPU_MS);
  if (r.error === undefined) {
    expectWellFormed(r.value as HoeffdingResult, rule);
    return { result: r.value };
  }
  if (!(r.error instanceof PairedItemsError)) throw new Error(`not a PairedItemsError: ${r.error instanceof Error ? r.error.stack : String(r.error)}`);
  const message = r.error.message;
  expect(message).not.toMatch(/[\r\n]/);
  expect(message).toMatch(LOCATED);
  const m = /^[^:]+:(\d+): /.exec(message);
  if (m) {
    const file = message.startsWith(T) ? treatment : baseline;
    const lines = file.text.split('\n');
    expect(Number(m[1])).toBeLessThanOrEqual(lines.length);
    expect(lines[Number(m[1]) - 1].trim()).not.toBe('');
  }
  return { message };
}

// plain loops: pair by (type, value) of the id, d_i = w_t t_i + w_b b_i, effect = mean d, halfwidth per Hoeffding
function referenceDecision(treatment: Array<[number | string, boolean]>, baseline: Array<[number | string, boolean]>, rule: HoeffdingRule) {
  const key = (id: number | string) => (typeof id === 'number' ? `n${id}` : `s${id}`);
  const b = new Map<string, boolean>();
  for (const [id, c] of baseline) b.set(key(id), c);
  let sum = 0;
  let wins = 0;
  let losses = 0;
  for (const [id, c] of treatment) {
    const d = rule.weights.treatment * (c ? 1 : 0) + rule.weights.baseline * (b.get(key(id)) ? 1 : 0);
    sum += d;
    if (d > 0) wins++;
    if (d < 0) losses++;
  }
  const n = treatment.length;
  const range = (rule.bounds[1] - rule.bounds[0]) * (Math.abs(rule.weights.treatment) + Math.abs(rule.weights.baseline));
  return { n, effect: sum / n, halfwidth: range * Math.sqrt(Math.log(1 / rule.alpha) / (2 * n)), winsTreatment: wins, winsBaseline: losses };
}

describe('eval file fuzz (rx decide inputs)', () => {
  let rule: HoeffdingRule;
  beforeAll(async () => {
    const parsed = parseSpec(JSON.parse(await readFile(path.join(REPO_ROOT, 'specs/embedded.json'), 'utf8')));
    if (!parsed.ok) throw new Error(parsed.errors.join('\n'));
    rule = decisionRule(parsed.spec);
  });

  it('random files: a well-formed result or a located PairedItemsError, never anything else', () => {
    fc.assert(
      fc.property(fileText(anyLine, 12), fileText(anyLine, 12), (t, b) => {
        decide({ source: T, text: t }, { source: B, text: b }, rule);
      }),
      fuzzParams(1),
    );
  });

  it('one bad line among valid ones is reported at exactly its file and line', () => {
    const uniqueIds = fc.uniqueArray(fc.integer({ min: 0, max: 10_000 }), { minLength: 1, maxLength: 20 });
    const bad = fc.oneof(
      fc.constantFrom('{"item_id": 1, "correct": "yes"}', '{"item_id": 2.5, "correct": true}', '[]', '{"item_id": 3, "correct": true', 'nope', '{"item_id": "", "correct": false}'),
      fc.constant('duplicate'),
    );
    fc.assert(
      fc.property(uniqueIds, fc.nat(), bad, fc.boolean(), (ids, at, badText, inTreatment) => {
        const lines = ids.map((id, i) => `{"item_id": ${id}, "correct": ${i % 2 === 0}}`);
        const k = at % (lines.length + 1);
        const inserted = badText === 'duplicate' ? lines[k === 0 ? 0 : k - 1] : badText;
        const broken = [...lines.slice(0, k), inserted, ...lines.slice(k)].join('\n');
        const intact = lines.join('\n');
        // a duplicate inserted at the front duplicates the next line, which is then the line reported
        const reported = badText === 'duplicate' && k === 0 ? 2 : k + 1;
        const source = inTreatment ? T : B;
        const { message } = decide({ source: T, text: inTreatment ? broken : intact }, { source: B, text: inTreatment ? intact : broken }, rule);
        expect(message).toBeDefined();
        expect(message?.startsWith(`${source}:${reported}: `)).toBe(true);
      }),
      fuzzParams(0.5),
    );
  });

  it('valid files in any order pair by item_id (1 and "1" are different items) and match a plain-loop reference', () => {
    const entry = fc.tuple(fc.oneof(fc.integer({ min: -50, max: 50 }), fc.string({ minLength: 1, maxLength: 3 })), fc.boolean());
    const items = fc.uniqueArray(entry, { minLength: 1, maxLength: 40, selector: ([id]) => `${typeof id}:${id}` });
    fc.assert(
      fc.property(items, fc.array(fc.boolean(), { minLength: 40, maxLength: 40 }), fc.nat(), (treatment, flips, seed) => {
        const baseline = treatment.map(([id], i): [number | string, boolean] => [id, flips[i]]);
        // the baseline file in another order
        const shuffled = baseline.map((x, i) => [x, (i * 7919 + seed) % 1009] as const).sort((a, b) => a[1] - b[1]).map(([x]) => x);
        const text = (rows: Array<[number | string, boolean]>) => rows.map(([id, c]) => JSON.stringify({ item_id: id, correct: c })).join('\n');
        const { result } = decide({ source: T, text: text(treatment) }, { source: B, text: text(shuffled) }, rule);
        const ref = referenceDecision(treatment, baseline, rule);
        expect(result).toBeDefined();
        expect(result?.n).toBe(ref.n);
        expect(result?.winsTreatment).toBe(ref.winsTreatment);
        expect(result?.winsBaseline).toBe(ref.winsBaseline);
        expect(result?.effect).toBeCloseTo(ref.effect, 12);
        expect(result?.halfwidth).toBeCloseTo(ref.halfwidth, 12);
      }),
      fuzzParams(0.5),
    );
  });

  it('mismatched item sets (an id dropped, added, or retyped as a string) are refused naming both sides', () => {
    fc.assert(
      fc.property(fc.uniqueArray(fc.integer({ min: 0, max: 500 }), { minLength: 2, maxLength: 30 }), fc.nat(), fc.constantFrom('drop', 'add', 'retype'), (ids, at, how) => {
        const line = (id: number | string) => JSON.stringify({ item_id: id, correct: true });
        const i = at % ids.length;
        const other: Array<number | string> = how === 'drop' ? ids.filter((_, j) => j !== i) : how === 'add' ? [...ids, 501 + i] : ids.map((id, j) => (j === i ? String(id) : id));
        const { message } = decide({ source: T, text: ids.map(line).join('\n') }, { source: B, text: other.map(line).join('\n') }, rule);
        expect(message).toMatch(/^item sets differ: /);
        if (how !== 'drop') expect(message).toContain(`only in ${B}`);
        if (how !== 'add') expect(message).toContain(`only in ${T}`);
      }),
      fuzzParams(0.3),
    );
  });

  it('files of 10^5 lines and lines of a megabyte are decided within the time bound', () => {
    const many = Array.from({ length: 100_000 }, (_, i) => `{"item_id": ${i}, "correct": ${i % 3 === 0}}`).join('\n');
    const r = tryWithCpuTime(() => decidePairedItems({ source: T, text: many }, { source: B, text: many }, rule));
    expect(r.error).toBeUndefined();
    expect(r.cpuMs).toBeLessThan(10 * DECIDE_CPU_MS);
    const huge = `{"item_id": "${'y'.repeat(1 << 20)}", "correct": true}`;
    expect(() => parseItemLines({ source: T, text: huge })).not.toThrow();
    const { message } = decide({ source: T, text: huge }, { source: B, text: '{"item_id": 1, "correct": true}' }, rule);
    expect(message).toMatch(/^item sets differ: /);
  });

  // FIXED (was a BUG, now guarded): libs/stats/src/paired-items.ts:65 (duplicate item_id) and :110 (`sample`, item sets differ) put the
  // whole item_id into the message, so a file with a megabyte id makes `rx decide` print a megabyte error line;
  // `describe` (line 114) already truncates values at 40 characters, ids could be shown the same way.
  it('error messages stay short whatever the ids', () => {
    const id = `"${'y'.repeat(1 << 20)}"`;
    const line = `{"item_id": ${id}, "correct": true}`;
    const dup = decide({ source: T, text: `${line}\n${line}` }, { source: B, text: line }, rule).message ?? '';
    const differ = decide({ source: T, text: line }, { source: B, text: '{"item_id": 1, "correct": true}' }, rule).message ?? '';
    expect(dup.length).toBeLessThan(1000);
    expect(differ.length).toBeLessThan(1000);
  });

  // FIXED (was a BUG, now guarded): libs/stats/src/paired-items.ts:57 reports an integer id too large for a double (400 digits, 1e400) as
  // "item_id must be a non-empty string or an integer, got null" (`describe` JSON.stringifies Infinity): the
  // user wrote an integer and is told it was null. Say it is too large (use a string id).
  it('an integer id too large for a number is reported as such, not as null', () => {
    const { message } = decide({ source: T, text: `{"item_id": ${'9'.repeat(400)}, "correct": true}` }, { source: B, text: '{"item_id": 1, "correct": true}' }, rule);
    expect(message).not.toMatch(/got null/);
  });

  // FIXED (was a BUG, now guarded): libs/stats/src/paired-items.ts:56 accepts integer ids beyond Number.MAX_SAFE_INTEGER, which JSON.parse
  // rounds: treatment id 9007199254740993 silently pairs with baseline id 9007199254740992 (a different item).
  // Refuse unsafe integers (ask for a string id).
  it('integer ids beyond 2^53 are refused rather than rounded into another item', () => {
    const r = tryWithCpuTime(() =>
      decidePairedItems({ source: T, text: '{"item_id": 9007199254740993, "correct": true}' }, { source: B, text: '{"item_id": 9007199254740992, "correct": false}' }, rule),
    );
    expect(r.error).toBeInstanceOf(PairedItemsError);
  });
});
