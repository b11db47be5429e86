// Macro and environment table of pylatexenc 2.10's default LatexWalker + LatexNodes2Text contexts (MIT licence,
// (c) Philippe Faist): the facts the cookbook's `_parse_latex` step relies on. The rows are data in
// latex-macro-table.data.json, generated from the pinned package by tools/grading-oracle/gen_latex_macro_table.py
// (see tools/grading-oracle/README.md); this module only types and checks them.
// Row: [name, argument spec ('{' mandatory, '[' optional, '*' star; 'verb' verbatim; null none), rendering:
//   a string: replacement text, with %s / %(n)s placeholders for the arguments;
//   0: discarded (also every macro absent from the table); 1: its arguments' text, concatenated;
//   2: a formatter implemented by name in latex-to-text.ts; optional 4th 1: no space allowed before '['].
// Environment rows end with pylatexenc's math-mode flag instead.
import table from './latex-macro-table.data.json';

export type LatexRendering = string | 0 | 1 | 2;
export type MacroRow = readonly [name: string, argspec: string | null, rendering: LatexRendering, noSpaceBeforeOptional?: 1];
export type EnvironmentRow = readonly [name: string, argspec: string | null, rendering: LatexRendering, mathMode: boolean];

const ARGSPEC = /^(?:verb|[*[{]+)$/;

function isRendering(r: unknown): r is LatexRendering {
  return typeof r === 'string' || r === 0 || r === 1 || r === 2;
}

function isArgspec(a: unknown): a is string | null {
  return a === null || (typeof a === 'string' && ARGSPEC.test(a));
}

/** The JSON rows, checked once at load: a malformed regenerated table fails here, not deep in a conversion. */
export function macroRows(rows: readonly unknown[]): readonly MacroRow[] {
  return rows.map((row, i) => {
    const ok =
      Array.isArray(row) &&
      (row.length === 3 || (row.length === 4 && row[3] === 1)) &&
      typeof row[0] === 'string' &&
      isArgspec(row[1]) &&
      isRendering(row[2]);
    if (!ok) throw new Error(`latex-macro-table.data.json: macro row ${i} is malformed: ${JSON.stringify(row)}`);
    return row as unknown as MacroRow;
  });
}

export function environmentRows(rows: readonly unknown[]): readonly EnvironmentRow[] {
  return rows.map((row, i) => {
    const ok =
      Array.isArray(row) &&
      row.length === 4 &&
      typeof row[0] === 'string' &&
      isArgspec(row[1]) &&
      isRendering(row[2]) &&
      typeof row[3] === 'boolean';
    if (!ok) throw new Error(`latex-macro-table.data.json: environment row ${i} is malformed: ${JSON.stringify(row)}`);
    return row as unknown as EnvironmentRow;
  });
}

export const PYLATEXENC_VERSION: string = table.pylatexenc;
export const MACRO_ROWS: readonly MacroRow[] = macroRows(table.macros);
export const ENVIRONMENT_ROWS: readonly EnvironmentRow[] = environmentRows(table.environments);
