import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { evaluateGates, formatGateReport } from '@rx/gates';
import { appendRunLine, writeRunFile } from '@rx/run-dir';
import { parseControllerConfig } from '../config';
import { openRun } from './open-run';
import { REPO_ROOT } from '../infra/repo-root';
import { formatRunStatus, runStatus } from '@rx/run-tools';

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
      appendRunLine(run.dir, 'dead-letters.jsonl', run.dir.deadLettersFile, {
        deadLetterJobId: `dl-${step}`,
        sourceQueue: 'sample-requests',
        sourceJobId: `${run.manifest.runId}-gs1_kernel-${step}-sample`,
        reason: 'unrecoverable',
        error: `sample of job ${step} gave up after 3 attempts: the policy server answered 503`,
        receivedAt: '2026-12-02T12:00:00.000Z',
        seen_at: '2026-12-02T12:00:01.000Z',
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

  it('gives the gates as data in --json (metric, exact value, bound, pass) and as short lines in text', () => {
    const run = open();
    const metrics = {
      executed_group_size_treatment: [1],
      executed_group_size_baseline: [8],
      pilot_mean_reward: 0.25547,
      kernel_effective_neighbors_p10: 7.639411227,
      frac_nonzero_advantage_treatment: 1,
      baseline_reward_corr: 0.41490000000000003,
      missing: {},
      counts: { treatmentRollouts: 128, baselineRollouts: 128, pilotSteps: [0, 1], corrPairs: 64, heldoutPrompts: 64, heldoutUnmatched: 0, heldoutSamplesPerPrompt: [8] },
    };
    const report = evaluateGates(run.spec, metrics);
    const pilot = { bandwidth: 0.5, run_id: 'r.p1', dir: 'pilot_bw0.5', treatment_steps: 2, baseline_steps: 1, baseline_from: 'pilot_bw0.5', heldout_from: 'pilot_bw0.5', metrics, report, lines: formatGateReport(report), wall_seconds: 1 };
    writeRunFile(run.dir, 'pilot.json', { pre_registered_bandwidth: 0.5, chosen_bandwidth: null, pass: false, pilots: [pilot], calibration: null, failed_logs: [], stop_reason: 'gates failed' });
    const s = runStatus(run.dir.root);
    const ess = s.gates[0].checks.find((c) => c.metric === 'kernel_effective_neighbors_p10');
    expect(ess).toEqual({ metric: 'kernel_effective_neighbors_p10', value: 7.639411227, bound: { min: 8 }, boundText: '>= 8', pass: false });
    expect(JSON.parse(JSON.stringify(s)).gates[0].pass).toBe(false);
    const text = formatRunStatus(s).split('\n');
    expect(text).toContain('gates at bandwidth 0.5: FAIL');
    expect(text).toContain('  FAIL kernel_effective_neighbors_p10 = 7.639, needs >= 8');
    expect(text).toContain('  pass baseline_reward_corr = 0.4149, needs >= 0.1');
  });

  it('says the verdict once, not "inconclusive: Inconclusive"', () => {
    const line = formatRunStatus({ ...runStatus(open().dir.root), verdict: { outcome: 'inconclusive', reasoning: ['Inconclusive: the interval [-0.0674, 0.0674] holds the margin -0.03.'] } })
      .split('\n')
      .find((l) => l.startsWith('verdict'));
    expect(line).toBe('verdict: Inconclusive: the interval [-0.0674, 0.0674] holds the margin -0.03.');
  });
});
