// `grade_answer` of the cookbook's math_grading.py (the "sympy" grader that its MathEnv uses for GSM8K): equal
// after the mathd normalisation, or after `_normalize`, or element by element (tuples), where two fractions must
// match as strings, an integer never matches a non-integer, and everything else is compared numerically.
import { normalizeAnswer, normalizeExpressionInTime, stripProperCommas, strIsInt } from './answer-normalize';
import { isZeroExpression } from './numeric-expression';
import { codePoints, isPyAlpha, lastCodePoint, pyStrip } from './python-text';

/**
 * Longer answers are graded wrong: the analogue of the cookbook's 1 s grading timeout (safe_grade -> False), which
 * LaTeX-heavy answers of this size reach in Python. Below it every step here is linear in the answer's length.
 */
export const MAX_ANSWER_CHARS = 100_000;

const TUPLE_CHARS = '()[]';

// split_tuple: the elements of "(a, b)" / "[a, b]", else the expression itself
function splitTuple(input: string): string[] {
  const expr = stripProperCommas(input);
  if (expr.length === 0) return [];
  const cps = codePoints(expr);
  if (
    cps.length > 2 && TUPLE_CHARS.includes(cps[0]) && TUPLE_CHARS.includes(cps[cps.length - 1]) &&
    cps.slice(1, -1).every((ch) => !TUPLE_CHARS.includes(ch))
  ) {
    return cps.slice(1, -1).join('').split(',').map(pyStrip);
  }
  return [expr];
}

// _is_frac: r"^-?[0-9]+.?/0*[1-9][0-9]*.?$" (Python's `$` also matches before a final newline)
const FRAC = /^-?[0-9]+[^\n]?\/0*[1-9][0-9]*[^\n]?$/u;
function isFrac(expr: string): boolean {
  return FRAC.test(expr.endsWith('\n') ? expr.slice(0, -1) : expr);
}

// should_allow_eval: at most two distinct letters (sqrt, frac aside), no "^{", "^(", "^d^", "^dd"
function shouldAllowEval(expr: string): boolean {
  const letters = new Set(codePoints(expr.replaceAll('sqrt', '').replaceAll('frac', '')).filter(isPyAlpha));
  if (letters.size > 2) return false;
  if (expr.includes('^{') || expr.includes('^(')) return false;
  return !/\^[0-9]+\^/.test(expr) && !/\^[0-9][0-9]+/.test(expr);
}

// are_equal_under_sympy: simplify((gt)-(given)) == 0
function equalUnderSympy(groundTruth: string, given: string): boolean {
  const expr = `(${groundTruth})-(${given})`;
  if (!shouldAllowEval(expr)) return false;
  return isZeroExpression(expr.replaceAll('^', '**')) === true;
}

/** The cookbook's `grade_answer(given_answer, ground_truth)`, in bounded time. */
export function isEquivalent(modelAnswer: string, groundTruth: string): boolean {
  if (modelAnswer.length > MAX_ANSWER_CHARS || groundTruth.length > MAX_ANSWER_CHARS) return false;
  if (normalizeAnswer(groundTruth) === normalizeAnswer(modelAnswer)) return true;
  const gt = normalizeExpressionInTime(groundTruth);
  const given = normalizeExpressionInTime(modelAnswer);
  if (gt === null || given === null) return false; // the cookbook's timeout (safe_grade -> False)
  if (gt === given) return true;
  if (given.length === 0) return false;
  const gtElems = splitTuple(gt);
  const givenElems = splitTuple(given);
  if (gtElems.length !== givenElems.length) return false;
  if (gtElems.length > 1 && (codePoints(gt)[0] !== codePoints(given)[0] || lastCodePoint(gt) !== lastCodePoint(given))) return false;
  for (let i = 0; i < gtElems.length; i++) {
    const a = gtElems[i];
    const b = givenElems[i];
    let ok: boolean;
    if (isFrac(a) && isFrac(b)) ok = a === b;
    else if (strIsInt(a) !== strIsInt(b)) ok = false;
    else ok = equalUnderSympy(a, b);
    if (!ok) return false;
  }
  return gtElems.length > 0;
}
