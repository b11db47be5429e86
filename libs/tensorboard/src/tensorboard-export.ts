// rx tensorboard <run dir> [--out DIR] (and rx export <run dir> --tensorboard [DIR]): the run's scalars as TensorBoard
// event files, one folder per TensorBoard run (run-scalars.ts), under <run dir>/tensorboard by default. Read-only on
// the run directory; a second export replaces the first's event files.
import * as path from 'node:path';
import { writeEventFile } from './event-file';
import { runScalars, TensorBoardExportError } from './run-scalars';

export const DEFAULT_TENSORBOARD_DIR = 'tensorboard';

export interface ExportedRun {
  name: string;
  file: string;
  tags: number;
  steps: number;
}

export interface TensorBoardExport {
  out: string;
  runs: ExportedRun[];
  notes: string[];
}

export function exportTensorBoard(runDir: string, out?: string, options: { now?: Date } = {}): TensorBoardExport {
  const now = (options.now ?? new Date()).getTime() / 1000;
  const { runs, notes } = runScalars(runDir, now);
  if (runs.length === 0) throw new TensorBoardExportError(`${runDir} has no metrics.jsonl, dev accuracy or gate report yet: nothing to export`);
  const target = path.resolve(out ?? path.join(runDir, DEFAULT_TENSORBOARD_DIR));
  const exported = runs.map((run) => ({
    name: run.name,
    file: writeEventFile(path.join(target, run.name), run.points, now),
    tags: new Set(run.points.map((p) => p.tag)).size,
    steps: new Set(run.points.map((p) => p.step)).size,
  }));
  return { out: target, runs: exported, notes };
}
