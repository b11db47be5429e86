// A Dockerfile read into stages and instructions (line continuations joined, comments dropped, heredoc bodies kept),
// a .dockerignore matcher, and the import closure of the apps: what the image must contain to run them.
import { builtinModules } from 'node:module';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { repoPath, repoRoot } from './deploy-layout';

export type Heredoc = { name: string; body: string };
export type Instruction = { keyword: string; args: string; heredocs: Heredoc[]; line: number };
export type Stage = { base: string; name?: string; instructions: Instruction[] };
export type Dockerfile = { globalArgs: Record<string, string>; stages: Stage[] };

export function parseDockerfile(text: string): Dockerfile {
  const lines = text.split('\n');
  const instructions: Instruction[] = [];
  for (let i = 0; i < lines.length; i++) {
    const first = lines[i];
    if (/^\s*(#|$)/.test(first)) continue;
    const start = i + 1;
    let joined = first;
    while (/\\\s*$/.test(joined) && i + 1 < lines.length) {
      joined = joined.replace(/\\\s*$/, '');
      i++;
      if (/^\s*#/.test(lines[i])) { joined += '\\'; continue; }
      joined += lines[i];
    }
    const m = /^\s*([A-Za-z]+)\s*(.*)$/.exec(joined);
    if (!m) throw new Error(`Dockerfile:${start}: cannot parse '${joined}'`);
    const heredocs: Heredoc[] = [];
    for (const h of m[2].matchAll(/<<-?(["']?)([A-Za-z_][A-Za-z0-9_]*)\1/g)) {
      const body: string[] = [];
      i++;
      while (i < lines.length && lines[i] !== h[2]) body.push(lines[i++]);
      if (i >= lines.length) throw new Error(`Dockerfile:${start}: heredoc ${h[2]} is not terminated`);
      heredocs.push({ name: h[2], body: body.join('\n') + '\n' });
    }
    instructions.push({ keyword: m[1].toUpperCase(), args: m[2].trim(), heredocs, line: start });
  }
  const globalArgs: Record<string, string> = {};
  const stages: Stage[] = [];
  for (const ins of instructions) {
    if (ins.keyword === 'FROM') {
      const fm = /^(?:--platform=\S+\s+)?(\S+)(?:\s+AS\s+(\S+))?$/i.exec(ins.args);
      if (!fm) throw new Error(`Dockerfile:${ins.line}: cannot parse FROM ${ins.args}`);
      stages.push({ base: fm[1].replace(/\$\{?([A-Za-z_][A-Za-z0-9_]*)\}?/g, (_, n: string) => globalArgs[n] ?? ''), name: fm[2], instructions: [] });
    } else if (!stages.length) {
      if (ins.keyword !== 'ARG') throw new Error(`Dockerfile:${ins.line}: ${ins.keyword} before the first FROM`);
      const am = /^([A-Za-z_][A-Za-z0-9_]*)(?:=(.*))?$/.exec(ins.args);
      if (am) globalArgs[am[1]] = (am[2] ?? '').replace(/^"(.*)"$/, '$1');
    } else {
      stages[stages.length - 1].instructions.push(ins);
    }
  }
  return { globalArgs, stages };
}

// The parser directives at the top of a Dockerfile (`# syntax=...`, `# escape=...`), as BuildKit reads them: lines
// of the form `# key=value` before any other line (a blank line, another comment or an instruction ends them).
export function parserDirectives(text: string): Record<string, string> {
  const directives: Record<string, string> = {};
  for (const line of text.split('\n')) {
    const m = /^#\s*([A-Za-z][A-Za-z0-9_-]*)\s*=\s*(\S+)\s*$/.exec(line);
    if (!m) break;
    directives[m[1].toLowerCase()] = m[2];
  }
  return directives;
}

// The ENV a stage sets (what a container of the image starts with before compose or k8s add theirs).
export function stageEnv(stage: Stage): Record<string, string> {
  const env: Record<string, string> = {};
  for (const ins of stage.instructions.filter((i) => i.keyword === 'ENV')) {
    for (const m of ins.args.matchAll(/([A-Za-z_][A-Za-z0-9_]*)=("[^"]*"|\S+)/g)) env[m[1]] = m[2].replace(/^"(.*)"$/, '$1');
  }
  return env;
}

// The VOLUME paths a stage declares (JSON array or space-separated form).
export function stageVolumes(stage: Stage): string[] {
  return stage.instructions.filter((i) => i.keyword === 'VOLUME').flatMap((i) => {
    const text = i.args.trim();
    return text.startsWith('[') ? (JSON.parse(text) as string[]) : text.split(/\s+/).filter(Boolean);
  });
}

export function argDefault(stage: Stage, name: string): string | undefined {
  for (const ins of stage.instructions) {
    const m = /^([A-Za-z_][A-Za-z0-9_]*)=(.*)$/.exec(ins.args);
    if (ins.keyword === 'ARG' && m && m[1] === name) return m[2].replace(/^"(.*)"$/, '$1');
  }
  return undefined;
}

// COPY/ADD from the build context (not --from, not heredoc): [sources, destination].
export function contextCopies(stage: Stage): Array<{ sources: string[]; dest: string; line: number }> {
  return stage.instructions.flatMap((ins) => {
    if ((ins.keyword !== 'COPY' && ins.keyword !== 'ADD') || ins.heredocs.length || /--from=/.test(ins.args)) return [];
    const words = ins.args.split(/\s+/).filter((w) => !w.startsWith('--'));
    return [{ sources: words.slice(0, -1), dest: words[words.length - 1], line: ins.line }];
  });
}

// .dockerignore semantics (the subset used here): patterns relative to the context root, `**` any depth,
// `*` within a segment, `!` re-includes; a path is excluded when the last matching pattern excludes it or a parent.
export function dockerignoreMatcher(text: string): (relPath: string) => boolean {
  const rules = text.split('\n').map((l) => l.trim()).filter((l) => l && !l.startsWith('#')).map((l) => {
    const negate = l.startsWith('!');
    const pattern = (negate ? l.slice(1) : l).replace(/^\/+|\/+$/g, '');
    const re = new RegExp('^' + pattern.split('/').map((seg) => seg === '**' ? '(?:.*)' : seg.replace(/[.+^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '[^/]*').replace(/\?/g, '[^/]')).join('/').replace(/\(\?:\.\*\)\//g, '(?:.*/)?') + '$');
    return { negate, re };
  });
  return (relPath: string) => {
    const parts = relPath.split('/');
    let excluded = false;
    for (let n = 1; n <= parts.length; n++) {
      const prefix = parts.slice(0, n).join('/');
      for (const r of rules) if (r.re.test(prefix)) excluded = !r.negate;
      if (excluded && n < parts.length) return true;
    }
    return excluded;
  };
}

// packages: imported when the importing module loads; lazyPackages: only by an indented require()/import()
// (inside a function: loaded on first use).
export type ImportClosure = { files: string[]; packages: Map<string, string[]>; lazyPackages: Map<string, string[]> };

const builtins = new Set(builtinModules);

function packageName(spec: string): string {
  const parts = spec.split('/');
  return spec.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0];
}

function resolveLocal(fromFile: string, spec: string): string | undefined {
  const base = path.resolve(path.dirname(fromFile), spec);
  for (const candidate of [base, `${base}.ts`, `${base}.js`, `${base}.json`, path.join(base, 'index.ts'), path.join(base, 'index.js')]) {
    if (fs.existsSync(candidate) && fs.statSync(candidate).isFile()) return candidate;
  }
  return undefined;
}

// Runtime imports of a TypeScript source: import/export ... from, import(), require(); `import type` is erased.
// A require()/import() on an indented line is lazy (in a function body); everything else loads with the module.
export function importSpecifiers(source: string): Array<{ spec: string; lazy: boolean }> {
  const code = source.replace(/\/\*[\s\S]*?\*\//g, '').replace(/^\s*\/\/.*$/gm, '');
  const specs: Array<{ spec: string; lazy: boolean }> = [];
  for (const m of code.matchAll(/^\s*(import|export)\s+(type\s+)?([^;'"]*?\bfrom\s+)?['"]([^'"]+)['"]/gm)) {
    if (!m[2]) specs.push({ spec: m[4], lazy: false });
  }
  for (const m of code.matchAll(/^([ \t]*).*?\b(?:import|require)\s*\(\s*['"]([^'"]+)['"]\s*\)/gm)) specs.push({ spec: m[2], lazy: m[1].length > 0 });
  return specs;
}

// Every source file reachable from the entry files (relative imports and @rx/<lib> aliases) and every package
// they import, with the files that import it.
export function importClosure(entries: string[]): ImportClosure {
  const seen = new Set<string>();
  const packages = new Map<string, string[]>();
  const lazyPackages = new Map<string, string[]>();
  const queue = entries.map((e) => path.resolve(e));
  while (queue.length) {
    const file = queue.pop() as string;
    if (seen.has(file)) continue;
    seen.add(file);
    if (!file.endsWith('.ts') && !file.endsWith('.js')) continue;
    for (const { spec, lazy } of importSpecifiers(fs.readFileSync(file, 'utf8'))) {
      let target: string | undefined;
      if (spec.startsWith('.')) target = resolveLocal(file, spec);
      else if (/^@rx\/[a-z-]+$/.test(spec)) target = repoPath('libs', spec.slice(4), 'src', 'index.ts');
      else if (spec.startsWith('node:') || builtins.has(spec) || builtins.has(packageName(spec))) continue;
      else {
        const into = lazy ? lazyPackages : packages;
        const name = packageName(spec);
        into.set(name, [...(into.get(name) ?? []), path.relative(repoRoot, file)]);
        continue;
      }
      if (!target || !fs.existsSync(target)) throw new Error(`${path.relative(repoRoot, file)}: cannot resolve '${spec}'`);
      queue.push(target);
    }
  }
  for (const name of packages.keys()) lazyPackages.delete(name);
  return { files: [...seen].map((f) => path.relative(repoRoot, f)).sort(), packages, lazyPackages };
}

type LockPackage = { dependencies?: Record<string, string>; optionalDependencies?: Record<string, string>; peerDependencies?: Record<string, string>; dev?: boolean };

// Package names `npm prune --omit=dev` keeps when `roots` are the production dependencies: their transitive
// closure over package-lock.json (by name; nested copies count as the same package).
export function lockfileClosure(lockText: string, roots: string[]): Set<string> {
  const lock = JSON.parse(lockText) as { packages?: Record<string, LockPackage> };
  const byName = new Map<string, LockPackage[]>();
  for (const [key, value] of Object.entries(lock.packages ?? {})) {
    const i = key.lastIndexOf('node_modules/');
    if (i < 0) continue;
    const name = key.slice(i + 'node_modules/'.length);
    byName.set(name, [...(byName.get(name) ?? []), value]);
  }
  const kept = new Set<string>();
  const queue = [...roots];
  while (queue.length) {
    const name = queue.pop() as string;
    if (kept.has(name) || !byName.has(name)) continue;
    kept.add(name);
    for (const p of byName.get(name) ?? []) {
      queue.push(...Object.keys(p.dependencies ?? {}), ...Object.keys(p.optionalDependencies ?? {}), ...Object.keys(p.peerDependencies ?? {}));
    }
  }
  return kept;
}
