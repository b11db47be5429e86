// The mutator itself: compounded stretches stop at MAX_MUTATED_JSON_CHARS (a 1 GB document cannot even be written
// as JSON), while a stretch that stays under the cap is applied.
import { applyMutations, jsonPaths, MAX_MUTATED_JSON_CHARS, type Json, type Mutation } from './json-mutation';

/** the 'extreme' mutation that stretches the value at `path` of `doc` (stretch: `at` a multiple of 3) */
function stretchAt(doc: Json, path: ReadonlyArray<string | number>): Mutation {
  const paths = jsonPaths(doc).map((p) => JSON.stringify(p));
  const i = paths.indexOf(JSON.stringify(path));
  if (i < 0) throw new Error(`no path ${JSON.stringify(path)}`);
  // at picks the path (at % paths.length) and a stretch (at % 3 === 0): one of i, i + n, i + 2n unless 3 divides n
  const at = [0, 1, 2].map((k) => i + k * paths.length).find((a) => a % 3 === 0);
  if (at === undefined) throw new Error(`${paths.length} paths: give the document a path count not divisible by 3`);
  return { kind: 'extreme', at, value: null, key: 'x' };
}

describe('applyMutations', () => {
  it('applies a stretch under the cap: an array of one string becomes 5000 entries', () => {
    const doc: Json = { a: ['s'], b: 1 };
    const out = applyMutations(doc, [stretchAt(doc, ['a'])]) as { a: string[] };
    expect(out.a).toHaveLength(5000);
  });

  it('skips a stretch that would take the document past the cap (5000 entries of a 200 kB string: 1 GB)', () => {
    const doc: Json = { a: ['s'], b: 1 };
    const longString = applyMutations(doc, [stretchAt(doc, ['a', 0])]) as { a: string[] };
    expect(longString.a[0].length).toBeGreaterThanOrEqual(200_000);
    const out = applyMutations(longString, [stretchAt(longString, ['a'])]) as { a: string[] };
    expect(out.a).toHaveLength(1);
    expect(JSON.stringify(out).length).toBeLessThanOrEqual(MAX_MUTATED_JSON_CHARS);
  });
});
