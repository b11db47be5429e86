// rx report: read a run directory, build the report and write it as <run dir>/report.html (atomically).
import { existsSync, readFileSync } from 'node:fs';
import { RunDir } from '@rx/run-dir';
import * as path from 'node:path';
import { renderReportHtml } from './report-html';
import { buildReportModel } from './report-model';
import { readRunDir, RunDirError } from './run-data';

export const REPORT_FILE = 'report.html';

export interface WrittenReport {
  file: string;
  bytes: number;
  charts: number;
  notes: string[];
}

/** chart.js's UMD bundle (defines the global Chart), to inline in the page */
export function chartJsBundle(): string {
  // the package exports only its entry points: the UMD bundle sits beside the CommonJS one in dist/
  const file = path.join(path.dirname(require.resolve('chart.js')), 'chart.umd.js');
  if (!existsSync(file)) throw new Error(`chart.js's UMD bundle is missing (${file}); reinstall the dependencies (npm ci)`);
  return readFileSync(file, 'utf8');
}

export function writeReport(runDir: string, options: { now?: Date } = {}): WrittenReport {
  const run = readRunDir(runDir);
  const model = buildReportModel(run, (options.now ?? new Date()).toISOString());
  const html = renderReportHtml(model, chartJsBundle());
  const file = path.join(run.root, REPORT_FILE);
  try {
    new RunDir(run.root).writeText(file, html); // atomic: a failed report leaves nothing behind
  } catch (err) {
    // ... and says why in one line
    const code = (err as NodeJS.ErrnoException).code;
    const why = code === 'EISDIR' ? `${file} is a directory: remove or rename it` : code === 'EACCES' || code === 'EPERM' || code === 'EROFS' ? `${run.root} cannot be written (${code})` : `cannot write ${file} (${code ?? (err as Error).message})`;
    throw new RunDirError(`${why}; the report was not written`);
  }
  return { file, bytes: Buffer.byteLength(html), charts: model.charts.length, notes: model.notes };
}
