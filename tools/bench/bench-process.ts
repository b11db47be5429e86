// Child processes of a benchmark (the pipeline services' real main.ts, the policy server): started by
// @rx/local-stack as the Dockerfile starts them (node -r ./tools/register.js <script>), ready when they log a JSON `ready` line with
// their URL, stopped with SIGTERM (SIGKILL after a grace period). Their memory is read from /proc/<pid>/status.
import { execFileSync, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { startNodeProcess as startLocalProcess, startNodeProcesses as startLocalProcesses, type NodeProcess } from '@rx/local-stack';

export interface BenchProcess {
  readonly name: string;
  readonly url: string;
  readonly pid: number;
  readonly child: ChildProcess;
  output(): string;
  /** SIGTERM, SIGKILL after graceMs; resolves with the exit code */
  stop(graceMs?: number): Promise<number | null>;
}

/** a service or entry point that logs a JSON `ready` line, started by @rx/local-stack (it ends with the bench) */
export async function startNodeProcess(name: string, script: string, env: Record<string, string>, readyTimeoutMs = 120_000): Promise<BenchProcess> {
  return asBenchProcess(await startLocalProcess({ name, entry: script, env, readyTimeoutMs }));
}

function asBenchProcess(p: NodeProcess): BenchProcess {
  return {
    name: p.name,
    url: p.url ?? '',
    pid: p.pid,
    child: p.child,
    output: () => p.output(Number.MAX_SAFE_INTEGER),
    stop: async (graceMs = 15_000) => (await p.stop(graceMs)).code,
  };
}

export interface ProcessMemory {
  /** peak resident set size since the process started (VmHWM), MiB */
  peakRssMiB: number;
  /** resident set size now (VmRSS), MiB */
  rssMiB: number;
}

// VmHWM and VmRSS are reported in kB; MiB = kB / 1024
export function processMemory(pid: number): ProcessMemory {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (field: string): number => {
    const m = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status);
    if (!m) throw new Error(`/proc/${pid}/status has no ${field}`);
    return Number(m[1]);
  };
  return { peakRssMiB: kb('VmHWM') / 1024, rssMiB: kb('VmRSS') / 1024 };
}

/** stops every process, in parallel; never throws */
export async function stopAll(processes: readonly BenchProcess[]): Promise<void> {
  await Promise.all(processes.map((p) => p.stop().catch(() => null)));
}

/** starts every process in parallel; if one fails, stops the others and throws its error */
export async function startNodeProcesses(specs: ReadonlyArray<{ name: string; script: string; env: Record<string, string> }>): Promise<BenchProcess[]> {
  return (await startLocalProcesses(specs.map((s) => ({ name: s.name, entry: s.script, env: s.env, readyTimeoutMs: 120_000 })))).map(asBenchProcess);
}

let clockTicks: number | undefined;

// CPU seconds = (utime + stime) / CLK_TCK, fields 14 and 15 of /proc/<pid>/stat (after the command name)
export function processCpuSeconds(pid: number): number {
  clockTicks ??= Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // fields[0] is field 3 (state): utime is field 14, stime field 15
  return (Number(fields[11]) + Number(fields[12])) / clockTicks;
}

// this process's CPU seconds = (user + system) microseconds / 1e6
export function ownCpuSeconds(): number {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1e6;
}

// runqueue wait of a process's main thread: field 2 of /proc/<pid>/schedstat (ns spent runnable but not running) / 1e9
export function runqueueWaitSeconds(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/schedstat`, 'utf8').trim().split(/\s+/);
  return Number(fields[1]) / 1e9;
}
