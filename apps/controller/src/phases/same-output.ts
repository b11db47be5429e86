// "The same output" of two copies of one state, within a stated tolerance (a GPU service's logprobs of one input
// move with batch composition and kernels): the per-target logprobs of the fixed batch compared element by element,
// |a - b| <= atol + rtol * |b|, and the largest |a - b| kept as evidence either way.
import { checkTolerance } from '@rx/preflight';
import type { SameOutputEvidence } from '@rx/run-dir';
import type { SameOutputTolerance } from '@rx/spec';

/** max |a - b| over every target, and whether each is within the tolerance; shapes that differ never pass. */
export function compareSameOutput(actual: readonly (readonly number[])[], expected: readonly (readonly number[])[], tolerance: SameOutputTolerance): SameOutputEvidence {
  const sameShape = actual.length === expected.length && actual.every((row, i) => row.length === expected[i].length);
  if (!sameShape) return { tolerance, max_abs_diff: null, pass: false };
  const check = checkTolerance(actual.flat(), expected.flat(), tolerance);
  return { tolerance, max_abs_diff: Number.isFinite(check.max_abs_error) ? check.max_abs_error : null, pass: check.pass };
}

/** The worse of two comparisons (the larger difference; passing only when both pass). */
export function worseOf(a: SameOutputEvidence, b: SameOutputEvidence): SameOutputEvidence {
  const diff = a.max_abs_diff === null || b.max_abs_diff === null ? null : Math.max(a.max_abs_diff, b.max_abs_diff);
  return { tolerance: a.tolerance, max_abs_diff: diff, pass: a.pass && b.pass };
}

/** One line: the measured difference against the tolerance and where the tolerance comes from. */
export function describeSameOutput(e: SameOutputEvidence): string {
  const diff = e.max_abs_diff === null ? 'not comparable (shapes differ or not finite)' : e.max_abs_diff.toExponential(3);
  const tol = `atol ${e.tolerance.atol}${e.tolerance.rtol > 0 ? ` + rtol ${e.tolerance.rtol}` : ''} (${e.tolerance.source === 'spec' ? 'correctness_preflight.same_output_tolerance' : "rx's default; set correctness_preflight.same_output_tolerance to change it"})`;
  return `max |logprob difference| ${diff}, tolerance ${tol}`;
}
