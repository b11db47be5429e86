import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { writeSyntheticRun } from '@rx/report/testing';
import { pythonTensorBoardAvailable, readEventFile, readWithEventAccumulator, scalarsByTag } from '@rx/tensorboard/testing';
import { TensorBoardExportError } from './run-scalars';
import { exportTensorBoard } from './tensorboard-export';

const tmp = mkdtempSync(path.join(tmpdir(), 'rx-tb-export-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

const run = writeSyntheticRun(path.join(tmp, 'run'), { steps: 12 });
const now = new Date('2026-01-02T00:00:00.000Z');
const exported = exportTensorBoard(run.root, undefined, { now });
const eventFileOf = (name: string): string => {
  const dir = path.join(exported.out, name);
  const files = readdirSync(dir).filter((f) => f.includes('tfevents'));
  expect(files).toHaveLength(1);
  return path.join(dir, files[0]);
};
const jsonLines = (file: string): Array<Record<string, unknown>> => readFileSync(file, 'utf8').split('\n').filter((l) => l.trim() !== '').map((l) => JSON.parse(l) as Record<string, unknown>);

/** what TensorBoard should show of a metrics.jsonl: tag -> [step, float32 value][], read here from the file */
function expectedFromMetrics(file: string): Map<string, Array<[number, number]>> {
  const out = new Map<string, Array<[number, number]>>();
  for (const line of jsonLines(file)) {
    for (const [key, value] of Object.entries(line)) {
      if (key === 'step' || typeof value !== 'number') continue;
      out.set(key, [...(out.get(key) ?? []), [line.step as number, Math.fround(value)]]);
    }
  }
  return out;
}

describe('rx tensorboard on a run directory', () => {
  it('writes one TensorBoard run per arm, per pilot (its gates) and per pilot arm, under <run dir>/tensorboard', () => {
    expect(exported.out).toBe(path.join(run.root, 'tensorboard'));
    expect(exported.runs.map((r) => r.name).sort()).toEqual(
      [run.baseline, run.treatment, 'pilot_bw0.5_FAILED_ess', `pilot_bw0.5_FAILED_ess/${run.treatment}`, 'pilot_bw1.0', `pilot_bw1.0/${run.treatment}`].sort(),
    );
  });

  it('gives every numeric key of each arm\'s metrics.jsonl at its step, and the dev accuracy at its number of updates', () => {
    for (const arm of [run.treatment, run.baseline]) {
      const got = scalarsByTag(readEventFile(eventFileOf(arm)));
      const expected = expectedFromMetrics(path.join(run.root, arm, 'metrics.jsonl'));
      const training = JSON.parse(readFileSync(path.join(run.root, arm, 'training.json'), 'utf8')) as { dev_accuracy: Array<{ updates: number; accuracy: number }> };
      expected.set('dev/accuracy', training.dev_accuracy.map((p) => [p.updates, Math.fround(p.accuracy)]));
      expect(Object.fromEntries(got)).toEqual(Object.fromEntries(expected));
      // the new signals are among them, one point per step
      expect(got.get('rx/frac_reward_zero_std')).toHaveLength(12);
      expect(got.get('rx/completions/clipped_ratio')).toHaveLength(12);
    }
  });

  it('stamps each step with its commit time (steps.jsonl), the version event with the export time', () => {
    const events = readEventFile(eventFileOf(run.treatment));
    expect(events[0]).toMatchObject({ fileVersion: 'brain.Event:2', wallTime: now.getTime() / 1000 });
    const committed = jsonLines(path.join(run.root, run.treatment, 'steps.jsonl')).map((r) => [r.step, Date.parse(r.committedAt as string) / 1000]);
    expect(events.filter((e) => e.step < 12 && e.fileVersion === undefined).map((e) => [e.step, e.wallTime])).toEqual(committed);
  });

  it('gives each pilot\'s gates at step 0: value (a set as min and max), verdict, bounds, and the pilot\'s verdict', () => {
    for (const { dir, report } of run.gateReports) {
      const got = scalarsByTag(readEventFile(eventFileOf(dir)));
      expect(got.get('gates/pass')).toEqual([[0, report.pass ? 1 : 0]]);
      for (const g of report.results) {
        if (typeof g.value === 'number') expect(got.get(`gates/${g.metric}`)).toEqual([[0, Math.fround(g.value)]]);
        if (Array.isArray(g.value)) expect([got.get(`gates/${g.metric}/min`), got.get(`gates/${g.metric}/max`)]).toEqual([[[0, Math.min(...g.value)]], [[0, Math.max(...g.value)]]]);
        expect(got.get(`gates/${g.metric}/pass`)).toEqual([[0, g.pass ? 1 : 0]]);
        if (g.bound.min !== undefined) expect(got.get(`gates/${g.metric}/bound_min`)).toEqual([[0, Math.fround(g.bound.min)]]);
      }
    }
    // the pre-registered bandwidth failed the neighbours gate; the calibration passed
    expect(scalarsByTag(readEventFile(eventFileOf('pilot_bw0.5_FAILED_ess'))).get('gates/kernel_effective_neighbors_p10/pass')).toEqual([[0, 0]]);
    expect(scalarsByTag(readEventFile(eventFileOf('pilot_bw1.0'))).get('gates/pass')).toEqual([[0, 1]]);
  });

  it('gives a pilot arm\'s metrics.jsonl as its own run', () => {
    const got = scalarsByTag(readEventFile(eventFileOf(`pilot_bw1.0/${run.treatment}`)));
    expect(Object.fromEntries(got)).toEqual(Object.fromEntries(expectedFromMetrics(path.join(run.root, 'pilot_bw1.0', run.treatment, 'metrics.jsonl'))));
  });

  it('replaces its own event files when run again, into a folder of one\'s choice', () => {
    const out = path.join(tmp, 'elsewhere');
    exportTensorBoard(run.root, out, { now });
    const again = exportTensorBoard(run.root, out, { now: new Date('2026-01-03T00:00:00.000Z') });
    expect(readdirSync(path.join(out, run.treatment))).toEqual([path.basename(again.runs.find((r) => r.name === run.treatment)!.file)]);
  });

  it('refuses a path that is no run directory, and a run with nothing to export yet, in one line', () => {
    expect(() => exportTensorBoard(path.join(tmp, 'missing'))).toThrow(TensorBoardExportError);
    const empty = path.join(tmp, 'empty');
    writeSyntheticRun(empty, { omit: ['training', 'pilot'] });
    expect(() => exportTensorBoard(empty)).toThrow(/nothing to export/);
    writeFileSync(path.join(tmp, 'a-file'), '');
    expect(() => exportTensorBoard(path.join(tmp, 'a-file'))).toThrow(/is a file/);
  });

  // PyPI is out of reach on this project's machines: the check runs wherever `python3 -c "import tensorboard"` works
  const withTensorBoard = pythonTensorBoardAvailable() ? it : it.skip;
  withTensorBoard('is read back whole by TensorBoard\'s own EventAccumulator (Python tensorboard installed)', () => {
    const read = readWithEventAccumulator(exported.out);
    for (const r of exported.runs) {
      const mine = Object.fromEntries(scalarsByTag(readEventFile(r.file)));
      expect({ run: r.name, scalars: read[r.name] }).toEqual({ run: r.name, scalars: mine });
    }
  });
});
