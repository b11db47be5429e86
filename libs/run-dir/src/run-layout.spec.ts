import { appendFileSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { formatBandwidth, pilotDirName, RunDir } from './run-layout';
import { loadRunState } from './run-files';
import { RunStateStore } from './run-state';

describe('RunDir', () => {
  let root: string;
  beforeEach(() => (root = mkdtempSync(path.join(tmpdir(), 'rx-rundir-'))));
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  it('writes whole files atomically and leaves no temporary file behind', () => {
    const dir = new RunDir(root);
    dir.writeJson(dir.path('a', 'b.json'), { x: 1 });
    expect(dir.readJson(dir.path('a', 'b.json'))).toEqual({ x: 1 });
    expect(readdirSync(dir.path('a'))).toEqual(['b.json']);
  });

  it('reads the complete lines of a step log and drops a torn last line', () => {
    const dir = new RunDir(root);
    const f = dir.stepsFile('gs1_kernel');
    dir.appendLine(f, { step: 0 });
    dir.appendLine(f, { step: 1 });
    appendFileSync(f, '{"step": 2, "tor');
    expect(dir.readLines(f)).toEqual([{ step: 0 }, { step: 1 }]);
    expect(dir.readLines(dir.stepsFile('absent'))).toEqual([]);
  });

  it('names pilot directories as the spec writes the bandwidths', () => {
    expect(pilotDirName(0.5)).toBe('pilot_bw0.5');
    expect(pilotDirName(1)).toBe('pilot_bw1.0');
    expect(formatBandwidth(0.25)).toBe('0.25');
    expect(path.basename(new RunDir(root).failedPilotDir(0.5, 'ess'))).toBe('pilot_bw0.5_FAILED_ess');
  });

  it('keeps the run state on disk after every change and reads it back validated', () => {
    const dir = new RunDir(root);
    const s = RunStateStore.create(dir, 'r1');
    s.beginAttempt(false, 'abc');
    s.addWall('preflight', 1.5);
    s.addWall('preflight', 2);
    s.complete('preflight');
    const back = loadRunState(dir);
    expect(back.isDone('preflight')).toBe(true);
    expect(back.state.wallSeconds.preflight).toBe(3.5);
    expect(back.state.attempts[0].outcome).toBe('running');
    dir.writeJson(dir.stateFile, { runId: 'r1', status: 'bogus' });
    expect(() => loadRunState(dir)).toThrow(/not a run state/);
  });
});
