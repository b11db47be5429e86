// BENCHMARKS.md: one section per benchmark between markers, replaced in place when the benchmark runs again,
// each with its figures, the machine it ran on, and the command that reproduces them.
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

export const REPO_ROOT = path.resolve(__dirname, '..', '..');
export const BENCHMARKS_FILE = path.join(REPO_ROOT, 'BENCHMARKS.md');

/** the order sections appear in, whatever order they were run in */
export const SECTION_ORDER = ['overhead', 'sampler-concurrency', 'scale-out', 'hot-paths', 'e2e', 'memory'] as const;

const HEADER = `# Benchmarks

Written by \`npm run bench -- <name>\` (\`tools/bench/main.ts\`; \`npm run bench -- all\` runs every one). Each section
is replaced when its benchmark runs again. Ratios are measured within one run, so that the load other work puts
on the machine affects both sides of a ratio; the load average is noted beside the figures.
`;

export interface Machine {
  cpus: number;
  memoryGiB: number;
  node: string;
  /** 1, 5 and 15 minute load averages */
  load: [number, number, number];
  date: string;
  commit: string;
}

export function machineInfo(): Machine {
  let commit = 'unknown';
  try {
    commit = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: REPO_ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
  } catch {
    /* not a git checkout */
  }
  const [l1, l5, l15] = os.loadavg();
  return {
    cpus: os.availableParallelism?.() ?? os.cpus().length,
    memoryGiB: os.totalmem() / 2 ** 30,
    node: process.version,
    load: [l1, l5, l15],
    date: new Date().toISOString().replace(/\.\d+Z$/, 'Z'),
    commit,
  };
}

export function machineLine(m: Machine, loadDuring?: readonly number[]): string {
  const during = loadDuring && loadDuring.length > 0 ? `; 1-min load average during the run ${Math.min(...loadDuring).toFixed(1)}-${Math.max(...loadDuring).toFixed(1)}` : '';
  return `Machine: ${m.cpus} CPUs (nproc), ${m.memoryGiB.toFixed(1)} GiB memory, Node ${m.node}, load average ${m.load.map((x) => x.toFixed(2)).join(' / ')} at the start${during}; ${m.date}, commit ${m.commit}.`;
}

/** samples the 1-minute load average every `everyMs` until stopped */
export function loadSampler(everyMs = 5000): { stop(): number[] } {
  const seen = [os.loadavg()[0]];
  const t = setInterval(() => seen.push(os.loadavg()[0]), everyMs);
  t.unref();
  return {
    stop() {
      clearInterval(t);
      seen.push(os.loadavg()[0]);
      return seen;
    },
  };
}

const begin = (name: string) => `<!-- bench:${name} -->`;
const end = (name: string) => `<!-- /bench:${name} -->`;

/** the document with the section of `name` replaced (or added in SECTION_ORDER position); `body` without markers */
export function upsertSection(doc: string, name: string, body: string): string {
  const block = `${begin(name)}\n${body.trim()}\n${end(name)}`;
  const base = doc.trim().length > 0 ? doc : HEADER;
  const start = base.indexOf(begin(name));
  if (start >= 0) {
    const stop = base.indexOf(end(name), start);
    if (stop < 0) throw new Error(`BENCHMARKS.md: section '${name}' has no end marker ${end(name)}`);
    return base.slice(0, start) + block + base.slice(stop + end(name).length);
  }
  // insert before the first section that comes later in SECTION_ORDER, else at the end
  const rank = (n: string) => {
    const i = (SECTION_ORDER as readonly string[]).indexOf(n);
    return i < 0 ? SECTION_ORDER.length : i;
  };
  const later = [...base.matchAll(/<!-- bench:([a-z0-9-]+) -->/g)].find((m) => rank(m[1]) > rank(name));
  if (later?.index !== undefined) return base.slice(0, later.index) + block + '\n\n' + base.slice(later.index);
  return base.trimEnd() + '\n\n' + block + '\n';
}

export function writeSection(name: string, body: string, file = BENCHMARKS_FILE): void {
  const doc = existsSync(file) ? readFileSync(file, 'utf8') : '';
  writeFileSync(file, upsertSection(doc, name, body));
}

/** a markdown table */
export function table(head: readonly string[], rows: ReadonlyArray<readonly string[]>): string {
  const line = (cells: readonly string[]) => `| ${cells.join(' | ')} |`;
  return [line(head), line(head.map(() => '---')), ...rows.map(line)].join('\n');
}

/** What one benchmark hands back: its BENCHMARKS.md section (without markers) and the lines it prints. */
export interface BenchResult {
  markdown: string;
  lines: string[];
}

export interface Benchmark {
  name: (typeof SECTION_ORDER)[number];
  summary: string;
  run(argv: string[]): Promise<BenchResult>;
}

/** the command line that reproduces a benchmark's figures */
export function reproduce(name: string, argv: readonly string[]): string {
  return ['npm run bench --', name, ...argv].join(' ');
}
