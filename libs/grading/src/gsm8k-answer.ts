// `extract_gsm8k_final_answer` of the cookbook's math_env.py: the reference answer of a GSM8K row.
import { pySplitLines, pyStrip } from './python-text';

/** Thrown for a dataset answer without '####' (the cookbook skips such rows). */
export class MissingGroundTruthError extends Error {}

/**
 * The text after '####' on the last line that starts with it (after strip), a leading ':' dropped, commas removed;
 * failing that, the last `####\s*(.+)` match anywhere, stripped.
 */
export function extractGroundTruth(datasetAnswer: string): string {
  const lines = pySplitLines(datasetAnswer);
  for (let i = lines.length - 1; i >= 0; i--) {
    const s = pyStrip(lines[i]);
    if (s.startsWith('####')) {
      let content = pyStrip(s.slice(4));
      if (content.startsWith(':')) content = pyStrip(content.slice(1));
      return pyStrip(content.replaceAll(',', ''));
    }
  }
  let last: string | null = null;
  for (const m of datasetAnswer.matchAll(/####\s*([^\n]+)/gu)) last = m[1];
  if (last !== null) return pyStrip(last);
  throw new MissingGroundTruthError('no "####" final answer in the dataset answer');
}
