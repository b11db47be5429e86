import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import * as path from 'node:path';
import { RunDir } from '@rx/run-dir';
import { acquireRunLock, DEFAULT_LOCK_STALE_MS, RunLockedError, runLockTiming } from './run-lock';

describe('the run directory lock', () => {
  let dir: RunDir;
  beforeEach(() => (dir = new RunDir(mkdtempSync(path.join(tmpdir(), 'rx-lock-')))));
  afterEach(() => rmSync(dir.root, { recursive: true, force: true }));

  it('lets one controller drive a run; a second waits, then refuses naming the holder', async () => {
    const release = await acquireRunLock(dir);
    expect(JSON.parse(readFileSync(dir.lockFile, 'utf8'))).toMatchObject({ pid: process.pid, host: hostname() });
    // the holder is alive (this process): refused after the wait
    const started = Date.now();
    const second = acquireRunLock(dir, { waitMs: 300, pollMs: 20 });
    await expect(second).rejects.toBeInstanceOf(RunLockedError);
    await expect(acquireRunLock(dir, { waitMs: 0 })).rejects.toThrow(`is being driven by the controller pid ${process.pid} on ${hostname()}`);
    expect(Date.now() - started).toBeGreaterThanOrEqual(290);
    release();
    const again = await acquireRunLock(dir, { waitMs: 0 });
    again();
    expect(() => readFileSync(dir.lockFile)).toThrow(/ENOENT/);
  });

  it('hands the run over when the holder lets go during the wait', async () => {
    const release = await acquireRunLock(dir);
    setTimeout(release, 150);
    const next = await acquireRunLock(dir, { waitMs: 5000, pollMs: 20 });
    expect(JSON.parse(readFileSync(dir.lockFile, 'utf8')).pid).toBe(process.pid);
    next();
  });

  it('takes over the lock of a controller that is gone, and a torn lock file', async () => {
    const dead = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], { encoding: 'utf8' });
    writeFileSync(dir.lockFile, JSON.stringify({ pid: Number(dead.stdout), host: hostname(), started_at: '2026-01-01T00:00:00Z' }));
    (await acquireRunLock(dir, { waitMs: 0 }))();
    writeFileSync(dir.lockFile, '{"pid": 12');
    const release = await acquireRunLock(dir, { waitMs: 0 });
    expect(JSON.parse(readFileSync(dir.lockFile, 'utf8')).pid).toBe(process.pid);
    release();
  });

  it('refuses a lock held on another host while its heartbeat goes on, and takes it over once it stops', async () => {
    const beat = new Date().toISOString();
    writeFileSync(dir.lockFile, JSON.stringify({ pid: 1, host: 'another-host', started_at: '2026-01-01T00:00:00Z', heartbeat_at: beat }));
    await expect(acquireRunLock(dir, { waitMs: 0 })).rejects.toThrow(/pid 1 on another-host .*remove .*controller\.lock if no such controller runs/);
    // 31 s later without a new heartbeat: the other pod is gone
    const release = await acquireRunLock(dir, { waitMs: 0, now: () => Date.parse(beat) + 31_000 });
    expect(JSON.parse(readFileSync(dir.lockFile, 'utf8')).host).toBe(hostname());
    release();
  });

  it('waits, by default, longer than the staleness window plus one heartbeat, whatever the window', () => {
    for (const stale of [1_000, 12_000, DEFAULT_LOCK_STALE_MS, 600_000]) {
      const t = runLockTiming(stale);
      expect(t.staleAfterMs).toBe(stale);
      expect(t.heartbeatMs).toBeLessThan(stale / 2);
      expect(t.waitMs).toBeGreaterThan(stale + t.heartbeatMs);
    }
    expect(runLockTiming().staleAfterMs).toBe(DEFAULT_LOCK_STALE_MS);
  });

  it("takes over a crashed pod's lock whose last heartbeat was fresh, without giving up first (a restarted Job pod)", async () => {
    // another host's controller beat just now, then died: the default wait must outlast its window
    writeFileSync(dir.lockFile, JSON.stringify({ pid: 1, host: 'crashed-pod', started_at: '2026-01-01T00:00:00Z', heartbeat_at: new Date().toISOString() }));
    const started = Date.now();
    const release = await acquireRunLock(dir, { staleAfterMs: 1_500, pollMs: 50 });
    expect(Date.now() - started).toBeGreaterThanOrEqual(1_400);
    expect(JSON.parse(readFileSync(dir.lockFile, 'utf8')).host).toBe(hostname());
    release();
  });
});
