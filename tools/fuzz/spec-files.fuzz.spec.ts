// Fuzz: experiment spec files. Mutations of specs/embedded.json and the libs/spec fixture, random JSON and
// damaged JSON text go through loadSpecText/parseSpec (never a throw; a rejection is a list of one-line
// "<json.path>: <message>" errors) and through `rx validate` (exit 0 or 2, one line per error, no stack trace).
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import fc from 'fast-check';
import { formatJsonPath, loadSpecText, parseSpec, type ExperimentSpec, type SpecParseResult } from '@rx/spec';
import { validateCommand as validate } from '@rx/cli';
import { mapLimit, REPO_ROOT, runInProcess, spawnRx, STACK_TRACE, type CliResult } from './cli-harness';
import { fuzzParams, fuzzRuns, fuzzTimeoutMs, SAMPLE_SEED, tryWithCpuTime } from './fuzz-config';
import { damagedJsonText, getAt, jsonPaths, mutatedJson, smallJson, type Json } from './json-mutation';

/** CPU milliseconds one spec may take to parse and check (a valid one takes well under 1 ms) ... */
const SPEC_CPU_MS = 250;
/**
 * ... plus this much per MB of its JSON. The checks are linear in the spec (an array stretched from 2000 to 8000
 * entries: 2-4x the time), but each entry can cost an error line: up to about 300 ms/MB measured under load
 * (activation_gate.checks, 1 MB: 284 ms), and compounded mutations reach megabytes. What the bound is for is a
 * check that grows faster than its input.
 */
const SPEC_CPU_MS_PER_MB = 400;

const BASES: Array<[string, string]> = [
  ['specs/embedded.json', path.join(REPO_ROOT, 'specs/embedded.json')],
  ['libs/spec fixture', path.join(REPO_ROOT, 'libs/spec/src/fixtures/small-spec.json')],
];

// "<path>: <message>": a path as formatJsonPath writes it ($, a.b[0]["odd key"]), then a one-line message
const ERROR_LINE = /^(\$|[A-Za-z_][A-Za-z0-9_]*|\[(\d+|"(?:[^"\\]|\\.)*")\])(\.[A-Za-z_][A-Za-z0-9_]*|\[(\d+|"(?:[^"\\]|\\.)*")\])*: \S[^\n\r]*$/;

/**
 * The cross-field rules an accepted spec satisfies, checked independently of libs/spec (plain comparisons):
 * returns the first broken one, or null.
 */
function brokenInvariant(spec: ExperimentSpec): string | null {
  const names = spec.arms.map((a) => a.name);
  const eff = spec.feasibility.effective_config;
  const kinds = spec.arms.map((a) => a.advantage).sort();
  if (kinds.join() !== 'group_mean,kernel_cross_prompt_baseline') return `arm kinds ${kinds.join()}`;
  if (new Set(names).size !== names.length) return 'duplicate arm names';
  for (const a of spec.arms) {
    if (a.groups_per_batch * a.group_size !== spec.batch_size) return `arm ${a.name}: groups_per_batch * group_size != batch_size`;
    if (a.lr !== spec.optimizer.lr) return `arm ${a.name}: lr != optimizer.lr`;
    if (spec.steps * a.groups_per_batch > spec.dataset.n_examples) return `arm ${a.name} draws more prompts than the dataset has`;
  }
  const effArms = [...eff.arms].sort();
  const armNames = [...names].sort();
  if (effArms.length !== armNames.length || effArms.some((n, i) => n !== armNames[i])) return 'effective_config.arms != arm names';
  if (eff.base_model !== spec.base_model || eff.batch_size !== spec.batch_size || eff.max_seq_len !== spec.max_seq_len) return 'effective_config differs';
  if (eff.steps !== spec.steps || eff.n_eval !== spec.eval.n_examples || !(eff.max_tokens < spec.max_seq_len)) return 'effective_config differs';
  const ids = spec.decision_rule.criteria.map((c) => c.id);
  if (!ids.includes('primary') || new Set(ids).size !== ids.length) return 'criterion ids';
  return null;
}

function checked(parse: () => SpecParseResult, opts: { oneLine?: boolean; input?: unknown } = {}): SpecParseResult {
  const r = tryWithCpuTime(parse);
  if (r.error !== undefined) throw new Error(`the spec parser threw: ${r.error instanceof Error ? r.error.stack : String(r.error)}`);
  const text = typeof opts.input === 'string' ? opts.input : JSON.stringify(opts.input);
  expect(r.cpuMs).toBeLessThan(SPEC_CPU_MS + SPEC_CPU_MS_PER_MB * ((text?.length ?? 0) / 1e6));
  const result = r.value as SpecParseResult;
  if (!result.ok) {
    expect(result.errors.length).toBeGreaterThan(0);
    expect(result.errors.filter((e) => !ERROR_LINE.test((opts.oneLine ?? true) ? e : e.split(/[\r\n]/)[0]))).toEqual([]);
  } else {
    expect(brokenInvariant(result.spec)).toBeNull();
    // an accepted spec is plain JSON data that is accepted again
    expect(parseSpec(JSON.parse(JSON.stringify(result.spec))).ok).toBe(true);
  }
  return result;
}

const pathOfError = (e: string): string => e.slice(0, e.search(/: \S/));

describe.each(BASES)('spec fuzz over %s', (_name, file) => {
  let base: Json;
  beforeAll(async () => {
    base = JSON.parse(await readFile(file, 'utf8')) as Json;
  });

  it('the unmutated spec is valid (so the mutations start from an accepted document)', () => {
    expect(checked(() => parseSpec(base))).toMatchObject({ ok: true });
  });

  it('mutated specs: parseSpec never throws, stays within its time bound, and names each error by path', () => {
    fc.assert(
      fc.property(mutatedJson(base), (doc) => {
        checked(() => parseSpec(doc), { input: doc });
      }),
      fuzzParams(0.4),
    );
  });

  it('each field deleted in turn is reported at its own path or its parent object (unless it is optional)', () => {
    const keys = jsonPaths(base).filter((p) => typeof p[p.length - 1] === 'string');
    expect(keys.length).toBeGreaterThan(20);
    const unreported: string[] = [];
    for (const deleted of keys) {
      const doc = structuredClone(base) as Record<string, Json>;
      delete (getAt(doc, deleted.slice(0, -1)) as Record<string, Json>)[deleted[deleted.length - 1] as string];
      const result = checked(() => parseSpec(doc));
      if (result.ok) continue;
      const near = [formatJsonPath(deleted), formatJsonPath(deleted.slice(0, -1))];
      if (!result.errors.some((e) => near.includes(pathOfError(e)))) unreported.push(`${formatJsonPath(deleted)} -> ${result.errors.join(' | ')}`);
    }
    expect(unreported).toEqual([]);
  });

  it('damaged JSON text: loadSpecText never throws; bad JSON is one `$: invalid JSON` error', () => {
    fc.assert(
      fc.property(damagedJsonText(base), (text) => {
        // a backslash put before a letter of a string makes an escape (\n among them) (the line-break test below)
        const r = checked(() => loadSpecText(text), { oneLine: false });
        if (!r.ok && r.errors[0].startsWith('$: invalid JSON')) expect(r.errors).toHaveLength(1);
      }),
      fuzzParams(0.3),
    );
  });

  // every string leaf set, one at a time, to a value with a line break
  const lineBreakSpecs = (): Json[] => {
    const strings = jsonPaths(base).filter((p) => typeof getAt(base, p) === 'string');
    expect(strings.length).toBeGreaterThan(5);
    return strings.flatMap((p) =>
      ['two\nlines', 'cr\rlf'].map((text) => {
        const doc = structuredClone(base) as Record<string, Json>;
        (getAt(doc, p.slice(0, -1)) as Record<string | number, Json>)[p[p.length - 1]] = text;
        return doc;
      }),
    );
  };

  it('a line break in any string field: never a throw, each error starts with its path', () => {
    for (const doc of lineBreakSpecs()) checked(() => parseSpec(doc), { oneLine: false });
  });

  // fixed: spec strings in messages are escaped (parse-spec.ts oneLine)
  it('a line break in any string field never splits an error message over two lines', () => {
    for (const doc of lineBreakSpecs()) checked(() => parseSpec(doc));
  });

  it('effective_config.arms must list the arm names, not a string that joins them', () => {
    const doc = structuredClone(base) as { arms: Array<{ name: string }>; feasibility: { effective_config: { arms: string[] } } };
    doc.feasibility.effective_config.arms = [doc.arms.map((a) => a.name).sort().join('\n')];
    expect(parseSpec(doc).ok).toBe(false);
  });
});

describe('spec fuzz over arbitrary input', () => {
  it('random JSON values: rejected with path-named errors, never a throw', () => {
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 4 }), (doc) => {
        expect(checked(() => parseSpec(doc)).ok).toBe(false);
      }),
      fuzzParams(0.3),
    );
  });

  // text without C0 control characters other than tab and newline (those are the next test's)
  const printable = fc.string({ unit: 'binary', maxLength: 200 }).map((t) => t.replace(/[\u0000-\u0008\u000b-\u001f\u007f]/g, ''));

  it('random text (any unicode, lone surrogates, a BOM): loadSpecText never throws', () => {
    const text = fc.oneof(printable, fc.json({ maxDepth: 3 }), fc.json().map((j) => `\uFEFF${j}`), printable.map((t) => `{"title": ${t}`));
    fc.assert(
      fc.property(text, (t) => {
        expect(checked(() => loadSpecText(t)).ok).toBe(false);
      }),
      fuzzParams(0.3),
    );
  });

  it('text with control characters: the invalid-JSON error carries none of them', () => {
    fc.assert(
      fc.property(fc.string({ unit: fc.constantFrom('\r', '\u0000', '\u001b', '[', '{', 'x', '"'), minLength: 1, maxLength: 20 }), (t) => {
        const r = checked(() => loadSpecText(t));
        if (!r.ok) for (const e of r.errors) expect(e).not.toMatch(/[\u0000-\u0008\u000b-\u001f\u007f]/);
      }),
      fuzzParams(0.2),
    );
  });

  it('odd objects: keys that look like prototypes, huge and deep values', () => {
    const odd = fc.oneof(
      fc.constant(JSON.parse('{"__proto__": {"title": "x"}, "constructor": 1}') as Json),
      fc.constant(JSON.parse(`${'['.repeat(5000)}${']'.repeat(5000)}`) as Json),
      fc.constant({ title: 'x'.repeat(1 << 20) } as Json),
      fc.dictionary(fc.string({ maxLength: 12 }), smallJson, { maxKeys: 40 }) as fc.Arbitrary<Json>,
    );
    fc.assert(
      fc.property(odd, (doc) => {
        expect(checked(() => parseSpec(doc)).ok).toBe(false);
      }),
      fuzzParams(0.1),
    );
  });
});

describe('rx validate on mutated spec files', () => {
  let dir: string;
  let base: Json;
  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'rx-fuzz-validate-'));
    base = JSON.parse(await readFile(BASES[0][1], 'utf8')) as Json;
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  /** exit 0 with a one-line summary, or exit 2 with a header and one indented line per error */
  function expectValidateAnswer(r: CliResult, file: string, text: string): void {
    expect(r.crash).toBeUndefined();
    expect(r.stderr).not.toMatch(STACK_TRACE);
    expect([0, 2]).toContain(r.code);
    const expected = loadSpecText(text);
    if (r.code === 0) {
      expect(expected.ok).toBe(true);
      expect(r.stderr).toBe('');
      expect(r.stdout).toMatch(/^[^\n]+\n$/);
      return;
    }
    expect(expected.ok).toBe(false);
    expect(r.stdout).toBe('');
    if (expected.ok) return;
    // bad JSON: one line naming the file; spec errors: a header, then one indented line per error
    const invalidJson = expected.errors.length === 1 && expected.errors[0].startsWith('$: invalid JSON: ');
    const n = expected.errors.length;
    expect(r.stderr).toBe(
      invalidJson ? `rx: ${file}: ${expected.errors[0].slice(3)}\n` : `rx: ${file}: invalid spec (${n} error${n === 1 ? '' : 's'})\n${expected.errors.map((e) => `  ${e}\n`).join('')}`,
    );
  }

  const sampleFiles = (n: number, seed: number): string[] =>
    fc.sample(fc.oneof({ weight: 4, arbitrary: mutatedJson(base).map((d) => JSON.stringify(d, null, 2)) }, { weight: 1, arbitrary: damagedJsonText(base) }), { numRuns: n, seed });

  it('in process (the command\'s run, main.ts\'s error handling): exit 0 or 2, one line per error', async () => {
    const texts = sampleFiles(fuzzRuns(0.15), SAMPLE_SEED);
    for (const [i, text] of texts.entries()) {
      const file = path.join(dir, `mutated-${i}.json`);
      await writeFile(file, text);
      const r = await runInProcess(validate, [file]);
      try {
        // what the command read: UTF-8 turns a lone surrogate into U+FFFD
        expectValidateAnswer(r, file, await readFile(file, 'utf8'));
      } catch (err) {
        throw new Error(`RX_FUZZ_SEED=${SAMPLE_SEED}, file ${i}: ${err instanceof Error ? err.message : String(err)}`);
      }
    }
  });

  it('the real CLI on a sample of mutated files', async () => {
    const texts = sampleFiles(fuzzRuns(0.003), SAMPLE_SEED + 1);
    const files = await Promise.all(
      texts.map(async (text, i) => {
        const file = path.join(dir, `spawned-${i}.json`);
        await writeFile(file, text);
        return file;
      }),
    );
    const results = await mapLimit(files, 2, (f) => spawnRx(['validate', f]));
    const written = await Promise.all(files.map((f) => readFile(f, 'utf8')));
    results.forEach((r, i) => {
      try {
        expectValidateAnswer(r, files[i], written[i]);
      } catch (err) {
        throw new Error(`RX_FUZZ_SEED=${SAMPLE_SEED}, spawned file ${i}: ${err instanceof Error ? err.message : String(err)}`);
      }
    });
  }, fuzzTimeoutMs(120_000));
});
