// The code revision of a run: sha256 of every source file (apps, libs, tools, specs, models, the root manifests),
// read from disk (a dirty working tree is what ran), plus the git commit when git answers.
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import * as path from 'node:path';
import { sha256Hex, sha256Json } from '@rx/run-dir';
import type { CodeRevision } from '@rx/run-dir';

const ROOTS = ['apps', 'libs', 'tools', 'specs', 'models'];
const ROOT_FILES = ['package.json', 'package-lock.json', 'tsconfig.base.json', 'tsconfig.json', 'jest.config.js', 'jest.preset.js', 'nx.json'];
const SKIP_DIRS = new Set(['node_modules', '.git', 'runs', 'tmp', 'dist', 'coverage', '.nx']);

function walk(root: string, rel: string, out: string[]): void {
  let entries: string[];
  try {
    entries = readdirSync(path.join(root, rel));
  } catch {
    return;
  }
  for (const name of entries.sort()) {
    if (SKIP_DIRS.has(name) || name.startsWith('.')) continue;
    const r = path.join(rel, name);
    const st = statSync(path.join(root, r));
    if (st.isDirectory()) walk(root, r, out);
    else if (st.isFile()) out.push(r);
  }
}

export function sourceFiles(repoRoot: string): string[] {
  const out: string[] = [];
  for (const r of ROOTS) walk(repoRoot, r, out);
  for (const f of ROOT_FILES) {
    try {
      if (statSync(path.join(repoRoot, f)).isFile()) out.push(f);
    } catch {
      // absent: not part of this tree
    }
  }
  return out.map((f) => f.split(path.sep).join('/')).sort();
}

export function codeRevision(repoRoot: string): CodeRevision {
  const files: Record<string, string> = {};
  for (const f of sourceFiles(repoRoot)) files[f] = sha256Hex(readFileSync(path.join(repoRoot, f)));
  const git = (() => {
    const head = spawnSync('git', ['rev-parse', 'HEAD'], { cwd: repoRoot, encoding: 'utf8' });
    if (head.status !== 0) return null;
    const status = spawnSync('git', ['status', '--porcelain', '--', ...ROOTS, ...ROOT_FILES], { cwd: repoRoot, encoding: 'utf8' });
    return { commit: head.stdout.trim(), dirty: status.status !== 0 || status.stdout.trim() !== '' };
  })();
  return { tree_sha256: sha256Json(Object.entries(files)), files, file_count: Object.keys(files).length, git };
}
