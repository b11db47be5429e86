// One controller per run directory: <run>/controller.lock holds the pid and host of the controller driving it,
// taken with O_EXCL and rewritten every few seconds as a heartbeat. A second controller (a `rx run --resume` while
// the first still runs) waits for the holder to go, then refuses with who holds it; a lock whose process is gone
// (same host), or whose heartbeat stopped (any host: a restarted Kubernetes pod), is taken over.
// The timings are derived from one staleness window, so that the wait always covers it: a replacement pod started
// right after a crash sees a heartbeat up to one beat old, waits until it is older than the window, and takes over
// (a wait shorter than the window would exit 2, which the Job's podFailurePolicy turns into a failed Job).
import { closeSync, openSync, readFileSync, renameSync, unlinkSync, writeFileSync, writeSync } from 'node:fs';
import { hostname } from 'node:os';
import type { RunDir } from '@rx/run-dir';
import { RunStateError } from '@rx/run-dir';

export class RunLockedError extends RunStateError {}

interface LockHolder {
  pid: number;
  host: string;
  started_at: string;
  heartbeat_at?: string;
}

/** how old a heartbeat may be before the lock counts as abandoned (RX_RUN_LOCK_STALE_MS) */
export const DEFAULT_LOCK_STALE_MS = 30_000;

export interface RunLockTiming {
  /** a heartbeat older than this: the holder is gone */
  staleAfterMs: number;
  /** how often the holder rewrites its heartbeat: six beats per window, so a slow beat or two never looks stale */
  heartbeatMs: number;
  /** how long a second controller waits for a live-looking holder: the whole window, one beat and a poll's slack */
  waitMs: number;
}

/** every timing of the lock from the staleness window (wait = window + a beat + slack, so it always covers it) */
export function runLockTiming(staleAfterMs: number = DEFAULT_LOCK_STALE_MS): RunLockTiming {
  const heartbeatMs = Math.max(50, Math.floor(staleAfterMs / 6));
  return { staleAfterMs, heartbeatMs, waitMs: staleAfterMs + heartbeatMs + 2_000 };
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function readHolder(file: string): LockHolder | null {
  try {
    return JSON.parse(readFileSync(file, 'utf8')) as LockHolder;
  } catch {
    return null;
  }
}

/** takes the run directory's lock; the returned function gives it back (also done at process exit) */
export async function acquireRunLock(
  dir: RunDir,
  opts: { staleAfterMs?: number; waitMs?: number; pollMs?: number; now?: () => number } = {},
): Promise<() => void> {
  const now = opts.now ?? Date.now;
  const timing = runLockTiming(opts.staleAfterMs);
  const file = dir.lockFile;
  const me: LockHolder = { pid: process.pid, host: hostname(), started_at: new Date(now()).toISOString() };
  const deadline = now() + (opts.waitMs ?? timing.waitMs);
  for (;;) {
    try {
      const fd = openSync(file, 'wx');
      writeSync(fd, `${JSON.stringify(me)}\n`);
      closeSync(fd);
      break;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
    const holder = readHolder(file);
    const beat = holder ? Date.parse(holder.heartbeat_at ?? holder.started_at) : NaN;
    const gone = holder !== null && ((holder.host === me.host && !alive(holder.pid)) || !(now() - beat < timing.staleAfterMs));
    if (holder === null || gone) {
      // a lock torn by a crash mid-write, or left by a controller that is gone: take it over
      try {
        unlinkSync(file);
      } catch {
        // another controller took it over first: try again
      }
      continue;
    }
    if (now() > deadline) {
      throw new RunLockedError(
        `${dir.root} is being driven by the controller pid ${holder.pid} on ${holder.host} (since ${holder.started_at}): stop it first, or remove ${file} if no such controller runs`,
      );
    }
    await new Promise((r) => setTimeout(r, opts.pollMs ?? 200));
  }
  let held = true;
  const heartbeat = setInterval(() => {
    if (readHolder(file)?.pid !== me.pid) return;
    const tmp = `${file}.${process.pid}.tmp`;
    writeFileSync(tmp, `${JSON.stringify({ ...me, heartbeat_at: new Date(now()).toISOString() })}\n`);
    renameSync(tmp, file);
  }, timing.heartbeatMs);
  heartbeat.unref();
  const release = (): void => {
    if (!held) return;
    held = false;
    clearInterval(heartbeat);
    process.off('exit', release);
    if (readHolder(file)?.pid === me.pid) {
      try {
        unlinkSync(file);
      } catch {
        // already gone
      }
    }
  };
  process.on('exit', release);
  return release;
}
