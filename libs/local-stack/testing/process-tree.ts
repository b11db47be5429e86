// The processes under a pid (its children, theirs, ...), read from `ps` (Linux and macOS), and which of a list
// still run: how the lifeline tests and the chaos suite see that a killed parent left nothing behind.
import { execFileSync } from 'node:child_process';

/** every descendant of pid that runs now, with its command line */
export function descendants(pid: number): Array<{ pid: number; command: string }> {
  const rows = execFileSync('ps', ['-A', '-o', 'pid=,ppid=,command='], { encoding: 'utf8' })
    .split('\n')
    .map((l) => /^\s*(\d+)\s+(\d+)\s+(.*)$/.exec(l))
    .filter((m): m is RegExpExecArray => m !== null)
    .map((m) => ({ pid: Number(m[1]), ppid: Number(m[2]), command: m[3] }));
  const found: Array<{ pid: number; command: string }> = [];
  const frontier = [pid];
  while (frontier.length > 0) {
    const parent = frontier.pop() as number;
    for (const r of rows) {
      if (r.ppid === parent) {
        found.push({ pid: r.pid, command: r.command });
        frontier.push(r.pid);
      }
    }
  }
  return found;
}

/** the pids of the list that still run (a zombie, dead but not yet reaped, counts as gone) */
export function stillRunning(pids: readonly number[]): number[] {
  const zombies = new Set(
    execFileSync('ps', ['-A', '-o', 'pid=,stat='], { encoding: 'utf8' })
      .split('\n')
      .map((l) => /^\s*(\d+)\s+(\S+)/.exec(l))
      .filter((m): m is RegExpExecArray => m !== null && m[2].startsWith('Z'))
      .map((m) => Number(m[1])),
  );
  return pids.filter((p) => {
    if (zombies.has(p)) return false;
    try {
      process.kill(p, 0);
      return true;
    } catch {
      return false;
    }
  });
}

/** waits until none of the pids runs; the pids still running after timeoutMs */
export async function waitGone(pids: readonly number[], timeoutMs: number): Promise<number[]> {
  const deadline = Date.now() + timeoutMs;
  let left = stillRunning(pids);
  while (left.length > 0 && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 100));
    left = stillRunning(left);
  }
  return left;
}
