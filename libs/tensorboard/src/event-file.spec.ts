import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { readEventFile, readTfRecords, scalarsByTag } from '@rx/tensorboard/testing';
import { encodeEventFile, writeEventFile, type ScalarPoint } from './event-file';

const tmp = mkdtempSync(path.join(tmpdir(), 'rx-tb-events-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

const points: ScalarPoint[] = [
  { tag: 'env/all/reward/total', step: 1, value: 0.3, wallTime: 1_700_000_010 },
  { tag: 'env/all/reward/total', step: 0, value: 0.25, wallTime: 1_700_000_000 },
  { tag: 'rx/frac_reward_zero_std', step: 0, value: 0.125, wallTime: 1_700_000_000 },
  { tag: 'rx/frac_reward_zero_std', step: 1, value: NaN, wallTime: 1_700_000_010 },
  { tag: 'dev/accuracy', step: 10, value: 0.5, wallTime: 1_700_000_100 },
];

describe('an event file of scalars, read back by the independent reader', () => {
  const file = path.join(tmp, 'events.out.tfevents.1.test');
  writeFileSync(file, encodeEventFile(points, 1_700_000_200));
  const events = readEventFile(file);

  it('starts with the version event', () => {
    expect(events[0]).toEqual({ wallTime: 1_700_000_200, step: 0, fileVersion: 'brain.Event:2', scalars: [] });
  });

  it('holds one event per step, steps ascending, every tag of the step in it (values as float32); a non-finite value is left out', () => {
    expect(events.slice(1).map((e) => [e.step, e.wallTime, e.scalars.map((s) => s.tag).sort()])).toEqual([
      [0, 1_700_000_000, ['env/all/reward/total', 'rx/frac_reward_zero_std']],
      [1, 1_700_000_010, ['env/all/reward/total']],
      [10, 1_700_000_100, ['dev/accuracy']],
    ]);
    expect(Object.fromEntries(scalarsByTag(events))).toEqual({
      'env/all/reward/total': [[0, Math.fround(0.25)], [1, Math.fround(0.3)]],
      'rx/frac_reward_zero_std': [[0, 0.125]],
      'dev/accuracy': [[10, 0.5]],
    });
  });

  it('refuses a negative or fractional step', () => {
    expect(() => encodeEventFile([{ tag: 'x', step: 1.5, value: 1, wallTime: 0 }], 0)).toThrow(/step 1.5/);
    expect(() => encodeEventFile([{ tag: 'x', step: -1, value: 1, wallTime: 0 }], 0)).toThrow(/step -1/);
  });

  it('frames every event as a TFRecord the reader accepts', () => {
    expect(readTfRecords(readFileSync(file))).toHaveLength(4);
  });
});

describe('writeEventFile', () => {
  it('replaces the event files of its folder (a second export does not double the points) and leaves other files', () => {
    const dir = path.join(tmp, 'arm');
    const first = writeEventFile(dir, points, 1_700_000_000);
    writeFileSync(path.join(dir, 'notes.txt'), 'kept');
    const second = writeEventFile(dir, points.slice(0, 1), 1_700_000_999);
    expect(existsSync(first)).toBe(false);
    expect(readdirSync(dir).sort()).toEqual([path.basename(second), 'notes.txt'].sort());
    expect(path.basename(second)).toBe('events.out.tfevents.1700000999.rx');
    expect(scalarsByTag(readEventFile(second)).get('env/all/reward/total')).toEqual([[1, Math.fround(0.3)]]);
  });
});
