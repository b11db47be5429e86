// The phase table against the run-directory contract: every phase between setup and record, in the order of
// PHASES, and each phase's result file is the one a resumed run checks for it (PHASE_FILES of @rx/run-dir).
import { PHASE_FILES, PHASES, RUN_FILES } from '@rx/run-dir';
import { PHASE_TABLE } from './phase-table';

describe('the phase table', () => {
  it('holds every phase after setup and before record, once, in the order of PHASES', () => {
    expect(PHASE_TABLE.map((e) => e.phase)).toEqual(PHASES.filter((p) => p !== 'setup' && p !== 'record'));
  });

  it("names as each phase's result file a file of the catalog, the one a resumed run checks where it checks one", () => {
    for (const entry of PHASE_TABLE) {
      expect(Object.keys(RUN_FILES)).toContain(entry.resultFile);
      expect([entry.phase, PHASE_FILES[entry.phase] ?? [entry.resultFile]]).toEqual([entry.phase, [entry.resultFile]]);
    }
  });

  it('reads back on resume the result of every phase a later phase needs (shared init, pilot, training, evaluation)', () => {
    expect(PHASE_TABLE.filter((e) => e.load).map((e) => e.phase)).toEqual(['shared_init', 'pilot', 'training', 'evaluation']);
  });
});
