// The versions and commits the oracle tools pin are written in several places: requirements.txt, the scripts'
// checks, the generated table and the labelled fixture. They must name the same ones, or a regeneration would
// silently mix versions. Reads the files as text; runs no Python.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

const here = __dirname;
const read = (...p: string[]): string => readFileSync(join(here, ...p), 'utf8');
const grading = join('..', '..', 'libs', 'grading', 'src');

function pins(): Record<string, string> {
  const out: Record<string, string> = {};
  for (const line of read('requirements.txt').split('\n')) {
    const m = /^([A-Za-z0-9_.-]+)==(\S+)\s*$/.exec(line);
    if (m) out[m[1].toLowerCase()] = m[2];
    else if (line.trim() && !line.startsWith('#')) throw new Error(`requirements.txt: not an exact pin: ${line}`);
  }
  return out;
}

describe('tools/grading-oracle pins', () => {
  const pinned = pins();

  it('pins pylatexenc, sympy and mpmath exactly', () => {
    expect(Object.keys(pinned).sort()).toEqual(['mpmath', 'pylatexenc', 'sympy']);
  });

  it('checks for the same versions in both scripts', () => {
    expect(read('gen_latex_macro_table.py')).toContain(`PINNED = "${pinned.pylatexenc}"`);
    expect(read('relabel_oracle.py')).toContain(
      `PINNED = {"pylatexenc": "${pinned.pylatexenc}", "sympy": "${pinned.sympy}"}`,
    );
  });

  it('matches what the committed data says it was generated with', () => {
    const table = JSON.parse(read(grading, 'latex-macro-table.data.json')) as { pylatexenc: string };
    expect(table.pylatexenc).toBe(pinned.pylatexenc);
    const about = (JSON.parse(read(grading, 'fixtures', 'cookbook-oracle.json')) as { about: string }).about;
    expect(about).toContain(`pylatexenc ${pinned.pylatexenc}`);
    expect(about).toContain(`sympy ${pinned.sympy.replace(/\.0$/, '')}`);
  });

  it('labels with the cookbook commits the transcription was copied from', () => {
    const about = (JSON.parse(read(grading, 'fixtures', 'cookbook-oracle.json')) as { about: string }).about;
    const transcription = read('cookbook_grading.py');
    const mathGrading = /math_grading\.py @ ?([0-9a-f]{40})/;
    expect(mathGrading.exec(about)?.[1]).toBe(mathGrading.exec(transcription)?.[1]);
    expect(read('check_transcription.py')).toContain(mathGrading.exec(transcription)?.[1]);
  });
});
