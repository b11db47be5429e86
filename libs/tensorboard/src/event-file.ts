// A TensorBoard event file of scalars: the version event, then one Event per step (ascending: TensorBoard drops the
// points of a tag whose step goes backwards) holding every tag's value at that step, each event a TFRecord.
import { readdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { makeDirs } from '@rx/run-dir';
import { encodeFileVersionEvent, encodeScalarEvent, type ScalarValue } from './event-messages';
import { tfRecord } from './tfrecord';

export interface ScalarPoint {
  tag: string;
  step: number;
  value: number;
  /** seconds since the epoch */
  wallTime: number;
}

/** event files are named events.out.tfevents.<seconds>.<host>; TensorBoard reads any file with `tfevents` in its name */
export const EVENT_FILE_PREFIX = 'events.out.tfevents.';

/** the bytes of an event file of these points (non-finite values left out), the version event stamped `wallTime` */
export function encodeEventFile(points: readonly ScalarPoint[], wallTime: number): Buffer {
  const bySteps = new Map<number, { wallTime: number; values: ScalarValue[] }>();
  for (const p of points) {
    if (!Number.isFinite(p.value)) continue;
    if (!Number.isSafeInteger(p.step) || p.step < 0) throw new RangeError(`scalar '${p.tag}': step ${p.step} is not a non-negative integer`);
    const at = bySteps.get(p.step) ?? { wallTime: p.wallTime, values: [] };
    at.values.push({ tag: p.tag, value: p.value });
    at.wallTime = Math.min(at.wallTime, p.wallTime);
    bySteps.set(p.step, at);
  }
  const records = [tfRecord(encodeFileVersionEvent(wallTime))];
  for (const [step, at] of [...bySteps.entries()].sort((a, b) => a[0] - b[0])) records.push(tfRecord(encodeScalarEvent(at.wallTime, step, at.values)));
  return Buffer.concat(records);
}

/**
 * Writes the points as the one event file of `dir` (atomically), after removing the event files already there, so a
 * second export replaces the first instead of doubling its points. Returns the file.
 */
export function writeEventFile(dir: string, points: readonly ScalarPoint[], wallTime: number): string {
  makeDirs(dir);
  for (const name of readdirSync(dir)) if (name.startsWith(EVENT_FILE_PREFIX)) rmSync(path.join(dir, name), { force: true });
  const file = path.join(dir, `${EVENT_FILE_PREFIX}${Math.floor(wallTime)}.rx`);
  // the partial file's name has no `tfevents` in it: a TensorBoard watching the directory never reads it
  const tmp = path.join(dir, `.writing-${process.pid}`);
  try {
    writeFileSync(tmp, encodeEventFile(points, wallTime));
    renameSync(tmp, file);
  } catch (err) {
    rmSync(tmp, { force: true });
    throw err;
  }
  return file;
}
