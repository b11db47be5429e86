// The Dockerfile and .dockerignore: multi-stage with `npm ci`, a slim non-root runtime with a healthcheck, every
// file and package the apps load at runtime in the image, and the entrypoint's role switch run for real with sh.
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { z } from 'zod';
import { readRepoFile, repoPath, repoRoot, runnableApps } from './deploy-layout';
import { argDefault, contextCopies, dockerignoreMatcher, importClosure, lockfileClosure, parseDockerfile, parserDirectives, Stage } from './dockerfile-parse';

const dockerfile = parseDockerfile(readRepoFile('Dockerfile'));
const stages = dockerfile.stages;
const runtime = stages[stages.length - 1];
const ignored = dockerignoreMatcher(readRepoFile('.dockerignore'));
const pkg = z.object({ dependencies: z.record(z.string()), devDependencies: z.record(z.string()) }).parse(JSON.parse(readRepoFile('package.json')));

const keywords = (s: Stage, k: string) => s.instructions.filter((i) => i.keyword === k);
const heredocScript = (target: string): string => {
  const ins = runtime.instructions.find((i) => i.keyword === 'COPY' && i.heredocs.length && i.args.trim().endsWith(target));
  if (!ins) throw new Error(`Dockerfile: no COPY heredoc to ${target}`);
  return ins.heredocs[0].body;
};

describe('Dockerfile', () => {
  it('builds in stages: an `npm ci` deps stage, then a slim runtime that copies the installed modules', () => {
    expect(stages.length).toBeGreaterThanOrEqual(2);
    const names = stages.map((s) => s.name);
    expect(stages.some((s) => keywords(s, 'RUN').some((r) => /\bnpm ci\b/.test(r.args)))).toBe(true);
    expect(runtime.base).toMatch(/^node:\d+[\w.-]*-slim$/);
    expect(keywords(runtime, 'RUN').some((r) => /\bnpm (ci|install)\b/.test(r.args))).toBe(false);
    const fromStages = runtime.instructions.flatMap((i) => [...i.args.matchAll(/--from=(\S+)/g)].map((m) => m[1]));
    expect(fromStages.length).toBeGreaterThan(0);
    for (const s of fromStages) expect(names).toContain(s);
  });

  it('pulls no frontend image: no `# syntax=` directive (Docker 23+ builds heredocs, COPY --chmod and RUN --mount itself)', () => {
    expect(parserDirectives(readRepoFile('Dockerfile'))).toEqual({});
    // the reader finds the directive where BuildKit does, and only there
    expect(parserDirectives('# syntax=docker/dockerfile:1.7\n# A comment\nFROM node:20\n')).toEqual({ syntax: 'docker/dockerfile:1.7' });
    expect(parserDirectives('# A comment\n# syntax=docker/dockerfile:1.7\nFROM node:20\n')).toEqual({});
  });

  it('runs as an unprivileged user with a /health healthcheck and the rx entrypoint', () => {
    const users = keywords(runtime, 'USER');
    expect(users.length).toBeGreaterThan(0);
    expect(users[users.length - 1].args).not.toMatch(/^(root|0)(:|$)/);
    const health = keywords(runtime, 'HEALTHCHECK');
    expect(health).toHaveLength(1);
    expect(health[0].args).toMatch(/\/health/);
    expect(health[0].args).toMatch(/process\.env\.PORT/);
    expect(keywords(runtime, 'ENTRYPOINT').map((e) => e.args)).toEqual(['["rx-entrypoint"]']);
  });

  it('keeps every package the apps import at runtime: dependencies plus RUNTIME_DEV_DEPS and what they pull in', () => {
    const prune = stages.find((s) => keywords(s, 'RUN').some((r) => /npm prune --omit=dev/.test(r.args)));
    expect(prune).toBeDefined();
    const kept = (argDefault(prune as Stage, 'RUNTIME_DEV_DEPS') ?? '').split(/\s+/).filter(Boolean);
    for (const name of kept) expect({ name, inPackageJson: name in pkg.devDependencies || name in pkg.dependencies }).toEqual({ name, inPackageJson: true });
    // swc-node needs these to run .ts at all.
    expect(kept).toEqual(expect.arrayContaining(['@swc-node/register', '@swc/core', 'typescript']));
    const declared = new Set([...Object.keys(pkg.dependencies), ...kept]);
    const inImage = lockfileClosure(readRepoFile('package-lock.json'), [...declared]);
    expect(inImage.has('@swc/core')).toBe(true);
    expect(inImage.has('jest')).toBe(false);
    const entries = [...runnableApps().map((a) => repoPath('apps', a, 'src', 'main.ts')), repoPath('tools', 'register.js')];
    const { packages, lazyPackages } = importClosure(entries);
    const missing = [...packages.entries()].filter(([name]) => !inImage.has(name)).map(([name, files]) => `${name} (imported by ${files[0]})`);
    expect(missing).toEqual([]);
    // Loaded on first use only (test helpers behind a barrel): a crash in the image if ever called.
    const lazyMissing = [...lazyPackages.entries()].filter(([name]) => !inImage.has(name)).map(([name, files]) => `${name} (${files[0]})`);
    if (lazyMissing.length) console.warn(`deploy-checks: required lazily at runtime but not in the image: ${lazyMissing.join(', ')}`);
    // In the image only through another package: works, but belongs in package.json.
    const undeclared = [...packages.entries()].filter(([name]) => !declared.has(name)).map(([name, files]) => `${name} (${files[0]})`);
    if (undeclared.length) console.warn(`deploy-checks: imported at runtime but not declared in package.json dependencies: ${undeclared.join(', ')}`);
  });

  const copies = contextCopies(runtime);
  const copied = copies.flatMap((c) => c.sources.map((s) => s.replace(/^\.\/?/, '').replace(/\/$/, '')));
  const inImage = (f: string): boolean => !ignored(f) && copied.some((s) => s === '' || f === s || f.startsWith(`${s}/`));

  it('copies every source file the apps load, and .dockerignore excludes none of them', () => {
    for (const c of copies) for (const s of c.sources) expect({ source: s, exists: fs.existsSync(repoPath(s)), ignored: s !== '.' && ignored(s) }).toEqual({ source: s, exists: true, ignored: false });
    const entries = runnableApps().map((a) => repoPath('apps', a, 'src', 'main.ts'));
    const { files } = importClosure(entries);
    expect(files.length).toBeGreaterThan(runnableApps().length);
    expect(files.filter((f) => !inImage(f))).toEqual([]);
  });

  it('holds every file a run record hashes, so the source hash in the image is the checkout\'s', () => {
    const hashes = repoPath('apps', 'controller', 'src', 'phases', 'record', 'source-hashes.ts');
    const { sourceFiles } = require(hashes) as { sourceFiles?: (root: string) => string[] };
    expect(typeof sourceFiles).toBe('function');
    const files = (sourceFiles as (root: string) => string[])(repoRoot);
    expect(files).toEqual(expect.arrayContaining(['package.json', 'tools/register.js']));
    expect(files.filter((f) => !inImage(f))).toEqual([]);
  });

  it('.dockerignore keeps secrets, installs, runs and git out of the build context', () => {
    for (const p of ['.env', '.env.local', 'node_modules', 'libs/x/node_modules/y/index.js', '.git', 'runs/a/record.json', 'tmp/x', 'data/gsm8k/test.jsonl']) {
      expect({ p, ignored: ignored(p) }).toEqual({ p, ignored: true });
    }
    for (const p of ['.env.example', 'package-lock.json', 'apps/grader/src/main.ts', 'specs/embedded.json', 'tools/register.js', 'models/char-lm/model.json']) {
      expect({ p, ignored: ignored(p) }).toEqual({ p, ignored: false });
    }
  });
});

describe('rx-entrypoint (the Dockerfile heredoc, run with sh)', () => {
  let bin = '';
  beforeAll(() => {
    bin = fs.mkdtempSync(path.join(os.tmpdir(), 'rx-entrypoint-'));
    for (const name of ['rx-entrypoint', 'rx']) fs.writeFileSync(path.join(bin, name), heredocScript(`/usr/local/bin/${name}`), { mode: 0o755 });
  });
  afterAll(() => fs.rmSync(bin, { recursive: true, force: true }));

  const run = (args: string[], env: Record<string, string>) =>
    spawnSync(path.join(bin, 'rx-entrypoint'), args, {
      cwd: os.tmpdir(),
      encoding: 'utf8',
      timeout: 60_000,
      env: { PATH: `${bin}:${path.dirname(process.execPath)}:/usr/bin:/bin`, RX_HOME: repoRoot, ...env },
    });

  it('without RX_ROLE or a command, exits 2 naming RX_ROLE and the apps it can run', () => {
    const r = run([], {});
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/set RX_ROLE/);
    for (const app of runnableApps()) expect(r.stderr).toContain(app);
  });

  it('rejects an RX_ROLE that is not an app, or a path', () => {
    for (const role of ['nope', '../apps/cli', '.hidden']) {
      const r = run([], { RX_ROLE: role });
      expect({ role, status: r.status }).toEqual({ role, status: 2 });
      expect(r.stderr).toMatch(/rx-entrypoint: .*RX_ROLE/);
    }
  });

  it('starts the app named by RX_ROLE through swc-node (the cli app prints its usage)', () => {
    const r = run([], { RX_ROLE: 'cli' });
    expect(r.stderr).toMatch(/^usage: rx <command>/); // no command is a usage error: the usage goes to stderr, exit 2
    expect(r.status).toBe(2);
  });

  it('runs a given command instead; `rx --help` reaches the CLI from any directory', () => {
    const r = run(['rx', '--help'], {});
    expect(r.stderr).toBe('');
    expect(r.stdout).toMatch(/^usage: rx <command>/);
    expect(r.status).toBe(0);
  });
});
