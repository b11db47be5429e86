// Spawns the real CLI (`node -r tools/register.js apps/cli/src/main.ts validate …`) on temporary files.
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { argsError, shown } from './validate.command';

const ROOT = path.resolve(__dirname, '../../../..');
const FIXTURE = path.join(ROOT, 'libs/spec/src/fixtures/small-spec.json');

function rx(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, ['-r', './tools/register.js', 'apps/cli/src/main.ts', ...args], { cwd: ROOT, timeout: 30_000 }, (err, stdout, stderr) => {
      resolve({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, stdout, stderr });
    });
  });
}

describe('rx validate', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'rx-validate-'));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('accepts a valid spec with a one-line summary', async () => {
    const r = await rx(['validate', FIXTURE]);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const lines = r.stdout.trimEnd().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain('valid: "fixture: a toy kernel-vs-group-mean comparison"');
    expect(lines[0]).toContain('treatment kern1 (kernel_cross_prompt_baseline, 8 prompts x 1) vs baseline gm4 (group_mean, 2 prompts x 4)');
  });

  it('rejects an invalid spec with exit 2 and one path-named line per error', async () => {
    const spec = JSON.parse(await readFile(FIXTURE, 'utf8'));
    spec.arms[1].advantage = 'kernel';
    spec.arms[0].lr = 0;
    spec.activation_gate.checks[2].max = 0.1;
    const file = path.join(dir, 'bad.json');
    await writeFile(file, JSON.stringify(spec));
    const r = await rx(['validate', file]);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr.trimEnd().split('\n')).toEqual([
      `rx: ${file}: invalid spec (3 errors)`,
      '  arms[0].lr: must be > 0',
      '  arms[1].advantage: unknown advantage kind "kernel" (allowed: group_mean, kernel_cross_prompt_baseline)',
      '  activation_gate.checks[2].min: min 0.2 is greater than max 0.1',
    ]);
  });

  it('reports a cross-field error by its path', async () => {
    const spec = JSON.parse(await readFile(FIXTURE, 'utf8'));
    spec.arms[0].groups_per_batch = 3;
    const file = path.join(dir, 'batch.json');
    await writeFile(file, JSON.stringify(spec));
    const r = await rx(['validate', file]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('  arms[0]: groups_per_batch * group_size = 3 * 4 = 12, not batch_size 8\n');
  });

  it('gives one clear line for a missing file, bad JSON and bad usage', async () => {
    const missing = await rx(['validate', path.join(dir, 'nope.json')]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toBe(`rx: cannot read spec ${path.join(dir, 'nope.json')}: no such file\n`);

    const file = path.join(dir, 'broken.json');
    await writeFile(file, '{\n  "title": \n}\n');
    const broken = await rx(['validate', file]);
    expect(broken.code).toBe(2);
    expect(broken.stderr).toMatch(new RegExp(`^rx: ${file.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}: invalid JSON: .+\\n$`));
    expect(broken.stderr.trimEnd().split('\n')).toHaveLength(1);

    const none = await rx(['validate']);
    expect(none.code).toBe(2);
    expect(none.stderr).toBe('rx: expected one spec file, got 0; usage: rx validate <spec.json>\n');
  });
});

describe('one-line messages from arguments (in process)', () => {
  const parseError = (argv: string[], options: ParseArgsConfig['options'] = {}): unknown => {
    try {
      parseArgs({ args: argv, options, strict: true, allowPositionals: false });
    } catch (err) {
      return err;
    }
    throw new Error('parseArgs accepted the arguments');
  };

  it('shown escapes control characters and leaves the rest', () => {
    expect(shown('a\nb\r\tc\u0000\u2028 é 😀')).toBe('a\\nb\\r\\tc\\u0000\\u2028 é 😀');
    expect(shown('/tmp/plain name.jsonl')).toBe('/tmp/plain name.jsonl');
  });

  it.each([
    [['--a\nb'], {}, "Unknown option '--a\\nb'; usage: rx x"],
    [['--a.\nB'], {}, "Unknown option '--a.\\nB'; usage: rx x"],
    [['x\ny'], {}, "Unexpected argument 'x\\ny'. This command does not take positional arguments; usage: rx x"],
    [['--w', '-1'], { w: { type: 'string' } }, "Option '--w' argument is ambiguous. Did you forget to specify the option argument for '--w'? To specify an option argument starting with a dash use '--w=-XYZ'; usage: rx x"],
  ] as const)('argsError(%j): %s', (argv, options, message) => {
    const err = argsError(parseError([...argv], options as ParseArgsConfig['options']), 'usage: rx x', argv);
    expect(err.message).toBe(message);
  });
});
