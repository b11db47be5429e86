// Child processes of a benchmark (the pipeline services' real main.ts, the policy server): started as the
// Dockerfile starts them (node -r ./tools/register.js <script>), ready when they log a JSON `ready` line with
// their URL, stopped with SIGTERM (SIGKILL after a grace period). Their memory is read from /proc/<pid>/status.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { REPO_ROOT } from './benchmarks-doc';

export interface BenchProcess {
  readonly name: string;
  readonly url: string;
  readonly pid: number;
  readonly child: ChildProcess;
  output(): string;
  /** SIGTERM, SIGKILL after graceMs; resolves with the exit code */
  stop(graceMs?: number): Promise<number | null>;
}

/** environment without the variables a service reads, so the parent's settings never leak into a child */
function cleanEnv(): Record<string, string> {
  return Object.fromEntries(Object.entries(process.env).filter((e): e is [string, string] => e[1] !== undefined && !/^(REDIS_URL|RX_|PORT$|HOST$|TINKER_)/.test(e[0])));
}

export function startNodeProcess(name: string, script: string, env: Record<string, string>, readyTimeoutMs = 120_000): Promise<BenchProcess> {
  const child = spawn(process.execPath, ['-r', './tools/register.js', script], { cwd: REPO_ROOT, env: { ...cleanEnv(), ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return new Promise<BenchProcess>((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`${name} did not log 'ready' within ${readyTimeoutMs} ms:\n${out.slice(-3000)}`));
    }, readyTimeoutMs);
    let pending = '';
    let ready = false;
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      pending += d.toString();
      const lines = pending.split('\n');
      pending = lines.pop() ?? '';
      for (const line of lines) {
        if (ready) continue;
        let event: { event?: string; url?: string } = {};
        try {
          event = JSON.parse(line) as typeof event;
        } catch {
          continue;
        }
        if (event.event !== 'ready' || !event.url) continue;
        ready = true;
        clearTimeout(timer);
        resolve({
          name,
          url: event.url,
          pid: child.pid!,
          child,
          output: () => out,
          stop: async (graceMs = 15_000) => {
            if (child.exitCode !== null || child.signalCode !== null) return child.exitCode;
            child.kill('SIGTERM');
            const kill = setTimeout(() => child.kill('SIGKILL'), graceMs);
            const code = await exited;
            clearTimeout(kill);
            return code;
          },
        });
      }
    });
    child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
    child.once('exit', (code) => {
      clearTimeout(timer);
      if (!ready) reject(new Error(`${name} exited with ${code} before it was ready:\n${out.slice(-3000)}`));
    });
  });
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
  const started = await Promise.allSettled(specs.map((s) => startNodeProcess(s.name, s.script, s.env)));
  const ok = started.filter((s): s is PromiseFulfilledResult<BenchProcess> => s.status === 'fulfilled').map((s) => s.value);
  const failed = started.find((s): s is PromiseRejectedResult => s.status === 'rejected');
  if (failed) {
    await stopAll(ok);
    throw failed.reason;
  }
  return ok;
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
