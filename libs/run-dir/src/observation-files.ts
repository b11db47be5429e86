// The observation files of a run directory: what the record hashes and the exchange record names.
import { existsSync, readdirSync, statSync } from 'node:fs';
import * as path from 'node:path';
import type { RunDir } from './run-layout';

function listFiles(dir: RunDir, rel: string, out: string[]): void {
  const abs = dir.path(rel);
  if (!existsSync(abs)) return;
  for (const name of readdirSync(abs).sort()) {
    const r = path.join(rel, name);
    if (statSync(dir.path(r)).isDirectory()) listFiles(dir, r, out);
    else out.push(r);
  }
}

/** every step log, held-out file, gate report and eval file of the run */
export function observationFiles(dir: RunDir): string[] {
  const all: string[] = [];
  listFiles(dir, '.', all);
  return all
    .map((f) => path.normalize(f))
    .filter((f) => /(^|\/)(steps(\.attempt-\d+)?\.jsonl|heldout\.jsonl|gate-report\.json|eval\.jsonl)$/.test(f) && !f.startsWith('services/') && !f.startsWith('logs/'))
    .sort();
}
