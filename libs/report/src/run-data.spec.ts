// readRunDir on synthetic run directories written as the controller writes them (through @rx/run-dir's writer),
// whole or with parts missing or damaged.
import { appendFileSync, mkdirSync, mkdtempSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { readRunDir, RunDirError, pilotLabel } from './run-data';
import { writeSyntheticRun } from '@rx/report/testing';

describe('readRunDir', () => {
  let work: string;
  let n = 0;
  const fresh = () => path.join(work, `run-${n++}`);

  beforeAll(() => {
    work = mkdtempSync(path.join(tmpdir(), 'rx-report-run-dir-'));
  });
  afterAll(() => rmSync(work, { recursive: true, force: true }));

  it('reads the arms, step logs, gate reports, eval files, decision and verdict of a complete run', () => {
    const fx = writeSyntheticRun(fresh(), { steps: 5, evalItems: 40 });
    const run = readRunDir(fx.root);

    expect(run.runId).toBe(fx.runId);
    expect(run.title).toMatch(/GS1 kernel-baseline RL vs GRPO/);
    expect(run.status).toEqual({ status: 'complete', reason: null });
    expect(run.treatment).toBe(fx.treatment);
    expect(run.baseline).toBe(fx.baseline);
    expect(run.arms.map((a) => [a.name, a.role]).sort()).toEqual([[fx.baseline, 'baseline'], [fx.treatment, 'treatment']].sort());
    expect(run.notes).toEqual([]);

    for (const arm of [fx.treatment, fx.baseline]) {
      const series = run.steps.find((s) => s.phase === 'training' && s.arm === arm);
      const records = fx.training[arm];
      expect(series?.source).toBe(path.join(arm, 'steps.jsonl'));
      expect(series?.steps.map((p) => p.step)).toEqual([0, 1, 2, 3, 4]);
      for (const [k, p] of (series?.steps ?? []).entries()) {
        let sum = 0;
        for (const r of records[k].rollouts) sum += r.reward;
        expect(p.rewardMean).toBe(sum / records[k].rollouts.length);
        expect(p.advantages).toEqual(records[k].rollouts.map((r) => r.advantage));
        expect(p.effectiveNeighbors).toEqual(records[k].rollouts.map((r) => r.effectiveNeighbors));
        expect(p.loss).toBe(records[k].loss);
      }
    }
    // the pilots' logs: the failed pilot kept beside the calibration (its baseline step too), the calibration's
    expect(run.steps.filter((s) => s.phase === 'pilot').map((s) => [s.label, s.steps.length])).toEqual([
      [`${fx.baseline} (pilot bw0.5, failed ess)`, 1],
      [`${fx.treatment} (pilot bw0.5, failed ess)`, 2],
      [`${fx.treatment} (pilot bw1.0)`, 2],
    ]);

    // pilot.json's reports once each (record.json and gate-report.json repeat them), the failed one first
    expect(run.gateReports.map((g) => [g.label, g.source, g.pass])).toEqual([
      ['pilot bw0.5 (failed)', 'pilot.json: pilots[0].report', false],
      ['pilot bw1.0', 'pilot.json: pilots[1].report', true],
    ]);
    fx.gateReports.forEach((expected, i) => {
      expect(run.gateReports[i].results.map((g) => [g.metric, g.value, g.pass, g.boundText])).toEqual(expected.report.results.map((g) => [g.metric, g.value, g.pass, g.boundText]));
    });
    const ess = run.gateReports[0].results.find((g) => g.metric === 'kernel_effective_neighbors_p10');
    expect(ess).toMatchObject({ bound: { min: 8 }, pass: false, measures: expect.stringMatching(/10th percentile/) });

    expect(run.evals.map((e) => [e.model, e.items.length])).toEqual([['base', 40], [fx.baseline, 40], [fx.treatment, 40]]);
    expect(run.evals.find((e) => e.model === fx.treatment)?.items.map((i) => i.correct)).toEqual(fx.eval[fx.treatment]);

    const d = fx.decision;
    expect(run.decision).toEqual({
      n: d?.n,
      effect: d?.effect,
      halfwidth: d?.halfwidth,
      lower: d?.lower,
      upper: d?.upper,
      outcome: d?.outcome,
      supported: d?.supported,
      winsTreatment: d?.wins_treatment,
      winsBaseline: d?.wins_baseline,
      margin: -0.03,
      alpha: 0.05,
      // a decision written before bounds were selectable: Hoeffding, nothing exploratory
      bound: 'hoeffding',
      exploratory: [],
      source: 'decision-summary.json',
    });
    expect(run.verdict).toEqual({ headline: d?.outcome, reasoning: [expect.stringContaining('against the margin -0.03')], source: 'record.json' });
  });

  it('reads the same facts without spec.json and pilot.json: the arms from effective-config.json, the gates from the pilot directories', () => {
    const whole = readRunDir(writeSyntheticRun(fresh(), { steps: 3, evalItems: 30, seed: 3 }).root);
    const fx = writeSyntheticRun(fresh(), { steps: 3, evalItems: 30, seed: 3, omit: ['spec', 'pilot-summary'] });
    const partial = readRunDir(fx.root);
    expect(partial.notes).toEqual([]);
    expect([partial.treatment, partial.baseline]).toEqual([fx.treatment, fx.baseline]);
    expect(partial.arms).toEqual(whole.arms);
    expect(partial.decision).toEqual(whole.decision);
    // the two pilot directories' gate-report.json files, the failed pilot first as it ran
    expect(partial.gateReports.map((g) => [g.label, g.source])).toEqual([
      ['pilot bw0.5 (failed)', `${path.join('pilot_bw0.5_FAILED_ess', 'gate-report.json')}: report`],
      ['pilot bw1.0', `${path.join('pilot_bw1.0', 'gate-report.json')}: report`],
    ]);
    expect(partial.gateReports.map((g) => g.results)).toEqual(whole.gateReports.map((g) => g.results));
    expect(partial.verdict).toEqual(whole.verdict);
  });

  it("reads the gates from the record's copy when no pilot file is left", () => {
    const fx = writeSyntheticRun(fresh(), { steps: 2, evalItems: 10, omit: ['pilot'] });
    const run = readRunDir(fx.root);
    expect(run.gateReports.map((g) => [g.label, g.source, g.pass])).toEqual([
      ['pilot bw0.5 (failed)', 'record.json: gates.pilots[0].report', false],
      ['pilot bw1.0', 'record.json: gates.pilots[1].report', true],
    ]);
  });

  it('reads a run stopped at the gates: the pilots and the verdict, the rest noted as missing', () => {
    const fx = writeSyntheticRun(fresh(), { scenario: 'stopped' });
    const run = readRunDir(fx.root);
    expect(run.status?.status).toBe('stopped');
    expect(run.gateReports.map((g) => [g.label, g.pass])).toEqual([['pilot bw0.5 (failed)', false], ['pilot bw1.0 (failed)', false]]);
    expect(run.steps.every((s) => s.phase === 'pilot')).toBe(true);
    expect(run.decision).toBeNull();
    expect(run.verdict).toMatchObject({ headline: 'stopped', reasoning: [expect.stringMatching(/^Stopped before a decision: activation gate failed at bandwidth 1.0/), expect.any(String)] });
    expect(run.notes).toEqual([
      'no training step logs (<arm>/steps.jsonl)',
      'no decision (decision-summary.json)',
      `no ${path.join(fx.baseline, 'eval.jsonl')}`,
      `no ${path.join(fx.treatment, 'eval.jsonl')}`,
    ]);
  });

  it('takes a torn last step line silently, notes a bad line in the middle, and keeps the first line of a step', () => {
    const fx = writeSyntheticRun(fresh(), { steps: 3 });
    const file = path.join(fx.root, fx.treatment, 'steps.jsonl');
    appendFileSync(file, `${JSON.stringify({ ...fx.training[fx.treatment][0], loss: 123 })}\n{"runId": "torn`);
    expect(readRunDir(fx.root).notes).toEqual([]);
    const series = readRunDir(fx.root).steps.find((s) => s.arm === fx.treatment && s.phase === 'training');
    expect(series?.steps.map((p) => [p.step, p.loss])).toEqual(fx.training[fx.treatment].map((r) => [r.step, r.loss]));

    writeFileSync(file, [JSON.stringify(fx.training[fx.treatment][0]), 'not json', JSON.stringify({ step: -1 }), JSON.stringify(fx.training[fx.treatment][1])].join('\n') + '\n');
    const run = readRunDir(fx.root);
    expect(run.notes).toEqual([`${path.join(fx.treatment, 'steps.jsonl')}:2: not valid JSON, line skipped`, `${path.join(fx.treatment, 'steps.jsonl')}:3: runId: Required; arm: Required; step: Number must be greater than or equal to 0, line skipped`]);
    expect(run.steps.find((s) => s.arm === fx.treatment && s.phase === 'training')?.steps.map((p) => p.step)).toEqual([0, 1]);
  });

  it('notes unreadable files instead of failing', () => {
    const fx = writeSyntheticRun(fresh(), { steps: 2, evalItems: 10 });
    writeFileSync(path.join(fx.root, 'decision-summary.json'), '{ "n": ');
    writeFileSync(path.join(fx.root, fx.baseline, 'eval.jsonl'), '{"item_id": 1, "correct": "yes"}\n');
    unlinkSync(path.join(fx.root, 'record.json'));
    const run = readRunDir(fx.root);
    expect(run.decision).toBeNull();
    // a complete run with no record and no decision has no verdict to show
    expect(run.verdict).toBeNull();
    expect(run.notes).toEqual([
      expect.stringMatching(/^decision-summary\.json \(a decision summary\) is not JSON \(7 bytes\): restore it/),
      'no decision (decision-summary.json)',
      `${path.join(fx.baseline, 'eval.jsonl')}:1: correct must be true or false, got "yes"`,
    ]);
  });

  it('finds the arms from their directories when the run holds no spec, and names the file that does not read', () => {
    const fx = writeSyntheticRun(fresh(), { steps: 2, evalItems: 10, omit: ['spec'] });
    writeFileSync(path.join(fx.root, 'effective-config.json'), '{}');
    const run = readRunDir(fx.root);
    expect(run.arms.map((a) => a.name)).toEqual([fx.baseline, fx.treatment].sort());
    // the decision still names the arms
    expect([run.treatment, run.baseline]).toEqual([fx.treatment, fx.baseline]);
    expect(run.notes.slice(0, 2)).toEqual([
      expect.stringMatching(/^effective-config\.json is not an effective configuration \(run_id: Required; spec_sha256: Required; title: Required\)/),
      expect.stringMatching(/^no spec in the run/),
    ]);
  });

  it('refuses a missing directory, a file, and a directory that is not a run', () => {
    const missing = path.join(work, 'nowhere');
    expect(() => readRunDir(missing)).toThrow(new RunDirError(`no run directory at ${missing}: pass the --out directory of an rx run`));
    const file = path.join(work, 'a-file.json');
    writeFileSync(file, '{}');
    expect(() => readRunDir(file)).toThrow(`${file} is a file, not a run directory`);
    const other = fresh();
    mkdirSync(path.join(other, 'gs1_kernel'), { recursive: true });
    writeFileSync(path.join(other, 'gs1_kernel', 'eval.jsonl'), '{"item_id": 1, "correct": true}\n');
    expect(() => readRunDir(other)).toThrow(`${other} is not a run directory (no run.json or record.json)`);
  });
});

describe('pilotLabel', () => {
  it('names a pilot directory', () => {
    expect(pilotLabel('pilot_bw0.5')).toBe('pilot bw0.5');
    expect(pilotLabel('pilot_bw1.0')).toBe('pilot bw1.0');
    expect(pilotLabel('pilot_bw0.5_FAILED_ess')).toBe('pilot bw0.5, failed ess');
    expect(pilotLabel('pilot_other')).toBe('pilot_other');
  });
});
