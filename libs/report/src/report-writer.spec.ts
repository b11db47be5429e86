// writeReport: report.html written whole, or not at all, with one line saying why.
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { writeSyntheticRun } from '@rx/report/testing';
import { REPORT_FILE, writeReport } from './report-writer';
import { RunDirError } from './run-data';

describe('writeReport', () => {
  let work: string;
  beforeAll(() => (work = mkdtempSync(path.join(tmpdir(), 'rx-report-writer-'))));
  afterAll(() => rmSync(work, { recursive: true, force: true }));

  it('writes report.html into the run directory and leaves no temporary file', () => {
    const fx = writeSyntheticRun(path.join(work, 'ok'), { steps: 2, evalItems: 10 });
    writeReport(fx.root);
    expect(existsSync(path.join(fx.root, REPORT_FILE))).toBe(true);
    expect(readdirSync(fx.root).filter((f) => f.includes('.tmp-'))).toEqual([]);
  });

  it('where report.html is a directory: one line naming it, and nothing left behind', () => {
    const fx = writeSyntheticRun(path.join(work, 'dir'), { steps: 2, evalItems: 10 });
    mkdirSync(path.join(fx.root, REPORT_FILE));
    expect(() => writeReport(fx.root)).toThrow(RunDirError);
    expect(() => writeReport(fx.root)).toThrow(`${path.join(fx.root, REPORT_FILE)} is a directory: remove or rename it; the report was not written`);
    expect(readdirSync(fx.root).filter((f) => f.includes('.tmp-'))).toEqual([]);
  });
});
