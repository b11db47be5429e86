// 5. The embedded experiment end to end: `rx run --spec specs/embedded.json` (what `npm start` runs) in a fresh
// run directory, timed, its phase breakdown read from the run's record.json (wall_seconds per phase), and the
// peak resident memory of every process it starts (VmHWM, sampled every 2 s over the process tree). A run that
// does not finish within --max-minutes is stopped with SIGTERM; the phases it completed come from state.json.
import { closeSync, existsSync, mkdirSync, openSync, readFileSync, readdirSync } from 'node:fs';
import * as path from 'node:path';
import { launchNodeChild } from '@rx/local-stack';
import { readRunFileIfExists, RunDir } from '@rx/run-dir';
import { parseNumericFlags } from './bench-args';
import { processMemory } from './bench-process';
import { fmt, verdict } from './bench-stats';
import { loadSampler, machineInfo, machineLine, REPO_ROOT, reproduce, table, type Benchmark } from './benchmarks-doc';

const FLAGS = {
  'max-minutes': { default: 20, min: 0.5, max: 240, integer: false, help: 'stop the run after this long' },
};

const TARGET_MINUTES = 15;
const SPEC = 'specs/embedded.json';


/** the pids under `root` (children of children), from /proc/<pid>/task/<tid>/children */
function descendants(root: number): number[] {
  const out: number[] = [];
  const visit = (pid: number) => {
    let tasks: string[] = [];
    try {
      tasks = readdirSync(`/proc/${pid}/task`);
    } catch {
      return;
    }
    for (const tid of tasks) {
      let children = '';
      try {
        children = readFileSync(`/proc/${pid}/task/${tid}/children`, 'utf8');
      } catch {
        continue;
      }
      for (const c of children.split(/\s+/).filter(Boolean).map(Number)) {
        out.push(c);
        visit(c);
      }
    }
  };
  visit(root);
  return out;
}

/** a short name for a process of the run: the script it runs (apps/<name>/src/main.ts -> name) */
function processName(pid: number): string {
  try {
    const argv = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean);
    const script = argv.find((a) => (a.endsWith('.ts') || a.endsWith('.js')) && !a.includes('register'));
    const m = script ? /apps\/([^/]+)\/src\/main\.ts$/.exec(script) : null;
    if (m) return m[1];
    return script ? path.relative(REPO_ROOT, script) : path.basename(argv[0] ?? String(pid));
  } catch {
    return String(pid);
  }
}

export const e2eBenchmark: Benchmark = {
  name: 'e2e',
  summary: `rx run --spec ${SPEC} end to end: wall time and phase breakdown from record.json`,
  async run(argv) {
    const o = parseNumericFlags('e2e', argv, FLAGS);
    const machine = machineInfo();
    const load = loadSampler();
    const stamp = machine.date.replace(/[:]/g, '').replace(/\..*$/, '');
    const outDir = path.join(REPO_ROOT, 'runs', 'bench', `e2e-${stamp}`);
    mkdirSync(path.dirname(outDir), { recursive: true });
    const logFile = `${outDir}.log`;
    const log = openSync(logFile, 'w');
    const args = ['run', '--spec', SPEC, '--out', outDir, '--port', 'off'];
    const t0 = performance.now();
    // its own process group, so a run stopped for time takes its services with it
    const child = launchNodeChild({ entry: 'apps/cli/src/main.ts', args, stdio: ['ignore', log, log], detached: true });
    const peaks = new Map<string, number>();
    const sampleMemory = () => {
      for (const pid of [child.pid!, ...descendants(child.pid!)]) {
        try {
          const name = processName(pid);
          peaks.set(name, Math.max(peaks.get(name) ?? 0, processMemory(pid).peakRssMiB));
        } catch {
          /* exited meanwhile */
        }
      }
    };
    const sampler = setInterval(sampleMemory, 2000);
    let timedOut = false;
    const deadline = setTimeout(() => {
      timedOut = true;
      child.kill('SIGTERM'); // the CLI passes it on to the controller, which stops its services
      setTimeout(() => {
        try {
          process.kill(-child.pid!, 'SIGKILL');
        } catch {
          /* already gone */
        }
      }, 60_000).unref();
    }, o['max-minutes'] * 60_000);
    const code = await new Promise<number | null>((resolve) => child.once('exit', (c) => resolve(c)));
    clearInterval(sampler);
    clearTimeout(deadline);
    closeSync(log);
    const wall = (performance.now() - t0) / 1000;
    const loads = load.stop();

    // read through the run-directory contract; a run stopped before writing one has none
    const dir = new RunDir(outDir);
    const readOrNull = <T>(read: () => T | null): T | null => {
      try {
        return read();
      } catch {
        return null;
      }
    };
    const record = readOrNull(() => readRunFileIfExists(dir, 'record.json'));
    const state = readOrNull(() => readRunFileIfExists(dir, 'state.json'));
    const phases: Array<[string, number]> = record?.wall_seconds
      ? Object.entries(record.wall_seconds).filter((e): e is [string, number] => typeof e[1] === 'number')
      : Object.entries(state?.wallSeconds ?? {});
    const largest = phases.reduce<[string, number] | null>((a, b) => (a === null || b[1] > a[1] ? b : a), null);
    const tail = existsSync(logFile) ? readFileSync(logFile, 'utf8').trim().split('\n').slice(-6) : [];
    const minutes = wall / 60;
    const finished = record !== null && !timedOut && code === 0;
    const rows = phases.map(([name, s]) => [name, `${fmt(s)} s`, `${fmt((100 * s) / wall, 2)} %`]);
    const memRows = [...peaks.entries()].sort((a, b) => b[1] - a[1]).map(([name, mib]) => [name, `${fmt(mib)} MiB`]);
    const status = finished
      ? `finished (exit 0), record status \`${record?.status ?? '?'}\``
      : timedOut
        ? `stopped after the ${o['max-minutes']}-minute cap (SIGTERM), exit ${code}`
        : `did not finish: exit ${code}${state?.status ? `, run status \`${state.status}\`` : ''}${state?.reason ? ` (${state.reason})` : ''}`;
    const notes: string[] = [];
    if (!finished) {
      notes.push(
        '- The run did not complete here, so the total is not the experiment\'s; the phases above are those it finished. Last lines of its output ' +
          `(\`${path.relative(REPO_ROOT, logFile)}\`):`,
        '',
        '```',
        ...tail.map((l) => l.slice(0, 300)),
        '```',
      );
    } else if (minutes > TARGET_MINUTES && largest) {
      notes.push(`- Over the ${TARGET_MINUTES}-minute target by ${fmt(minutes - TARGET_MINUTES)} min; the largest phase is \`${largest[0]}\` (${fmt(largest[1])} s).`);
    }
    if (largest) notes.push(`- Largest phase: \`${largest[0]}\`, ${fmt(largest[1])} s (${fmt((100 * largest[1]) / wall, 2)} % of the wall time).`);
    const markdown = [
      '## 5. Embedded experiment end to end',
      '',
      `Command: \`${reproduce('e2e', argv)}\` (runs \`rx run --spec ${SPEC} --out runs/bench/e2e-<date> --port off\`, the run \`npm start\` makes). ${machineLine(machine, loads)}`,
      '',
      `Run ${status}: **${fmt(minutes)} min** wall${finished ? `: ${verdict(minutes, TARGET_MINUTES, 'max', ' min')}` : ''}. Phases (${record ? 'record.json `wall_seconds`' : 'state.json `wallSeconds`'}):`,
      '',
      rows.length > 0 ? table(['phase', 'wall', 'share of the run'], rows) : '(no phase finished)',
      '',
      memRows.length > 0 ? 'Peak RSS (VmHWM) of the processes of the run, sampled every 2 s:\n\n' + table(['process', 'peak RSS'], memRows) : '',
      '',
      ...notes,
    ].join('\n');
    return { markdown, lines: [`e2e: ${status}; ${fmt(minutes)} min${largest ? `; largest phase ${largest[0]} ${fmt(largest[1])} s` : ''} (target <= ${TARGET_MINUTES} min)`] };
  },
};
