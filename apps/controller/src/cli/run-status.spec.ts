import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { parseControllerConfig } from '../config';
import { openRun } from '../experiment/run-experiment';
import { REPO_ROOT } from '../infra/repo-root';
import { formatRunStatus, runStatus } from './run-status';

describe('rx status', () => {
  let root: string;
  beforeEach(() => (root = mkdtempSync(path.join(tmpdir(), 'rx-status-'))));
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  const open = () => openRun({ specPath: path.join(REPO_ROOT, 'specs', 'embedded.json'), outDir: path.join(root, 'run'), services: 'spawn', config: parseControllerConfig({}) });

  it('summarises a run that has only just opened, with no dead letters', () => {
    const run = open();
    const s = runStatus(run.dir.root);
    expect([s.run_id, s.backend, s.dead_letters]).toEqual([run.manifest.runId, 'embedded', { count: 0, latest: [] }]);
    expect(s.arms.map((a) => [a.arm, a.steps_done, a.steps])).toEqual(run.spec.arms.map((a) => [a.name, 0, run.spec.steps]));
    expect(formatRunStatus(s)).not.toMatch(/dead letter/);
  });

  it('shows the dead letters the controller kept: how many, and the latest five with their reasons', () => {
    const run = open();
    for (let step = 0; step < 7; step++) {
      run.dir.appendLine(run.dir.deadLettersFile, {
        deadLetterJobId: `dl-${step}`,
        sourceQueue: 'sample-requests',
        sourceJobId: `${run.manifest.runId}-gs1_kernel-${step}-sample`,
        reason: 'unrecoverable',
        error: `sample of job ${step} gave up after 3 attempts: the policy server answered 503`,
        receivedAt: '2026-12-02T12:00:00.000Z',
      });
    }
    const s = runStatus(run.dir.root);
    expect(s.dead_letters.count).toBe(7);
    expect(s.dead_letters.latest.map((l) => l.sourceJobId)).toEqual([2, 3, 4, 5, 6].map((k) => `${run.manifest.runId}-gs1_kernel-${k}-sample`));
    const text = formatRunStatus(s).split('\n');
    const at = text.findIndex((l) => l.startsWith('dead letters: 7 (the latest 5)'));
    expect(at).toBeGreaterThan(0);
    expect(text[at]).toContain(path.join(run.dir.root, 'dead-letters.jsonl'));
    expect(text[at + 5]).toBe(`  ${run.manifest.runId}-gs1_kernel-6-sample on sample-requests (unrecoverable): sample of job 6 gave up after 3 attempts: the policy server answered 503`);
  });
});
