// npm run bench -- <name> [flags]: runs one benchmark (or `all`, each with its defaults), prints its figures and
// replaces its section of BENCHMARKS.md. A mistake in the command line is one line on stderr and exit code 2.
import 'reflect-metadata';
import { BenchUserError } from './bench-args';
import { BENCHMARKS_FILE, SECTION_ORDER, writeSection, type Benchmark } from './benchmarks-doc';

type Name = (typeof SECTION_ORDER)[number];

const BENCHMARKS: Record<Name, () => Promise<Benchmark>> = {
  overhead: async () => (await import('./overhead.bench')).overheadBenchmark,
  'sampler-concurrency': async () => (await import('./sampler-concurrency.bench')).samplerConcurrencyBenchmark,
  'scale-out': async () => (await import('./scale-out.bench')).scaleOutBenchmark,
  'hot-paths': async () => (await import('./hot-paths.bench')).hotPathsBenchmark,
  e2e: async () => (await import('./e2e.bench')).e2eBenchmark,
  memory: async () => (await import('./memory.bench')).memoryBenchmark,
};

const USAGE = `usage: npm run bench -- <${[...SECTION_ORDER, 'all'].join('|')}> [flags]`;

async function runOne(name: Name, argv: string[]): Promise<void> {
  const bench = await BENCHMARKS[name]();
  process.stdout.write(`bench ${name}: ${bench.summary}\n`);
  const result = await bench.run(argv);
  writeSection(name, result.markdown);
  for (const line of result.lines) process.stdout.write(line + '\n');
  process.stdout.write(`bench ${name}: section written to ${BENCHMARKS_FILE}\n`);
}

async function main(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (!name || name === '--help' || name === '-h') {
    process.stdout.write(USAGE + '\n');
    return name ? 0 : 2;
  }
  if (name === 'all') {
    if (rest.length > 0) throw new BenchUserError(`'all' runs every benchmark with its defaults and takes no flags; ${USAGE}`);
    for (const n of SECTION_ORDER) await runOne(n, []);
    return 0;
  }
  if (!(SECTION_ORDER as readonly string[]).includes(name)) throw new BenchUserError(`unknown benchmark '${name}'; ${USAGE}`);
  await runOne(name as Name, rest);
  return 0;
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    if (err instanceof BenchUserError) {
      process.stderr.write(`bench: ${err.message}\n`);
      process.exitCode = 2;
    } else {
      process.stderr.write(`bench: failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
      process.exitCode = 1;
    }
  },
);
