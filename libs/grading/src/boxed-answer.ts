// `extract_boxed` of the cookbook's math_grading.py: the content of the \boxed{...} that closes last, found with
// a brace stack over the whole completion; an unmatched '}' anywhere is an error (no answer, no format credit);
// without a braced box, `\boxed 2` (whitespace, then letters/digits) still counts. Linear time, no regex on the
// completion except the fallback's, which cannot backtrack.

/** The answer inside the last \boxed{}, or null where the cookbook raises (no box, unmatched '}'). */
export function extractBoxed(completion: string): string | null {
  const stack: number[] = [];
  let lastStart = -1;
  let lastEnd = -1;
  for (let i = 0; i < completion.length; i++) {
    const c = completion.charCodeAt(i);
    if (c === 0x7b /* { */) stack.push(i);
    else if (c === 0x7d /* } */) {
      const open = stack.pop();
      if (open === undefined) return null; // ValueError("Unmatched }")
      if (open >= 6 && completion.startsWith('\\boxed', open - 6)) {
        lastStart = open + 1;
        lastEnd = i;
      }
    }
  }
  if (lastStart >= 0) return completion.slice(lastStart, lastEnd);
  const m = /\\boxed\s+([a-zA-Z0-9]+)/u.exec(completion);
  return m ? m[1] : null;
}
