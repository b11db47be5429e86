// The module-boundary rules of eslint.config.js bite: each fixture in ./fixtures is linted with the real config, as
// if it were the file its first line names (`// lint as: <path>`, a path inside the project the rule is about), and
// must be reported on exactly the lines marked `// error: <rule id> <words of the message>`; the clean fixtures
// pass. The fixtures are not .ts files, so tsc, jest, nx graph and `npm run lint` never see them.
import { readdirSync, readFileSync } from 'node:fs';
import * as path from 'node:path';
import { createProjectGraphAsync } from '@nx/devkit';
import { ESLint } from 'eslint';

const ROOT = path.resolve(__dirname, '../..');
const FIXTURES = path.join(__dirname, 'fixtures');

interface Expected {
  line: number;
  ruleId: string;
  message: string;
}

interface Fixture {
  name: string;
  lintAs: string;
  code: string;
  expected: Expected[];
}

function readFixture(name: string): Fixture {
  const code = readFileSync(path.join(FIXTURES, name), 'utf8');
  const lines = code.split('\n');
  const lintAs = /^\/\/ lint as: (\S+)$/.exec(lines[0])?.[1];
  if (lintAs === undefined) throw new Error(`${name}: the first line must be "// lint as: <path>"`);
  const expected = lines.flatMap((text, i) => {
    const m = /\/\/ error: (\S+) (.+)$/.exec(text);
    return m && !text.startsWith('//') ? [{ line: i + 1, ruleId: m[1], message: m[2] }] : [];
  });
  return { name, lintAs, code, expected };
}

const fixtures = readdirSync(FIXTURES)
  .filter((f) => f.endsWith('.ts.fixture'))
  .sort()
  .map(readFixture);

let eslint: ESLint;

beforeAll(async () => {
  // @nx/enforce-module-boundaries reads the cached project graph (`npm run lint` runs `nx graph` first): bring it
  // up to date with the project.json files and imports as they are now
  await createProjectGraphAsync({ exitOnError: false });
  // the real eslint.config.js, required here: ESLint would load it with import(), which jest's vm does not allow
  const config = require(path.join(ROOT, 'eslint.config.js')) as ESLint.Options['overrideConfig'];
  eslint = new ESLint({ cwd: ROOT, overrideConfigFile: true, overrideConfig: config });
});

describe('eslint.config.js module boundaries', () => {
  it('has a fixture for each rule and clean ones', () => {
    const rules = new Set(fixtures.flatMap((f) => f.expected.map((e) => e.ruleId)));
    expect([...rules].sort()).toEqual(['@nx/enforce-module-boundaries', 'no-restricted-imports', 'no-restricted-syntax']);
    expect(fixtures.filter((f) => f.expected.length === 0).length).toBeGreaterThanOrEqual(3);
  });

  it.each(fixtures.map((f) => [f.name, f] as const))('%s', async (_name, fixture) => {
    const [result] = await eslint.lintText(fixture.code, { filePath: path.join(ROOT, fixture.lintAs) });
    // a file the config ignores comes back with a warning and nothing checked: that would pass vacuously
    expect(result.messages.filter((m) => m.ruleId === null)).toEqual([]);
    const reported = result.messages.map((m) => ({ line: m.line, ruleId: m.ruleId, message: m.message }));
    expect(reported.map(({ line, ruleId }) => ({ line, ruleId }))).toEqual(fixture.expected.map(({ line, ruleId }) => ({ line, ruleId })));
    for (const [i, e] of fixture.expected.entries()) expect(reported[i].message).toContain(e.message);
  });
});
