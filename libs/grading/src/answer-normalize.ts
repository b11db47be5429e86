// The two answer normalisations of the cookbook's math_grading.py: `normalize_answer` (the MATH "mathd" string
// normalisation, `_strip_string` and its helpers) and `_normalize` (the PRM800K-style normalisation that runs
// before the numeric comparison). Step for step, including where the Python raises.
import { latexToText, LatexTooLargeError } from './latex-to-text';
import {
  codePoints, isNearInteger, pyFloat, pyInt, pyLen, pyStrip, roundedIntString, truncatedIntString,
} from './python-text';

/** Where the Python code raises inside `_strip_string` (IndexError, AssertionError): mathd keeps the raw answer. */
class StripFailure extends Error {}

/** `re.search(r"^\\text\{(?P<text>.+?)\}$", s)`: the text inside an enclosing \text{...}, or null. */
export function enclosingText(s: string): string | null {
  if (!s.startsWith('\\text{')) return null;
  const rest = s.slice(6);
  // `$` matches at the end or before a final newline; `.` never matches a newline
  const p = rest.endsWith('}\n') ? rest.length - 2 : rest.endsWith('}') ? rest.length - 1 : -1;
  if (p < 1) return null;
  const inner = rest.slice(0, p);
  return inner.includes('\n') ? null : inner;
}

// _fix_fracs: \frac12 -> \frac{1}{2}, \frac1{72} -> \frac{1}{72}
function fixFracs(string: string): string {
  const substrs = string.split('\\frac');
  let out = substrs[0];
  for (const substr of substrs.slice(1)) {
    out += '\\frac';
    const cps = codePoints(substr);
    if (cps.length === 0) throw new StripFailure('IndexError in _fix_fracs');
    if (cps[0] === '{') {
      out += substr;
      continue;
    }
    if (cps.length < 2) return string;
    const [a, b] = cps;
    const post = cps.slice(2).join('');
    out += b !== '{' ? `{${a}}{${b}}${post}` : `{${a}}${b}${post}`;
  }
  return out;
}

// _fix_a_slash_b: "3/4" -> \frac{3}{4} when both sides are canonical integers
function fixASlashB(string: string): string {
  const parts = string.split('/');
  if (parts.length !== 2) return string;
  const a = pyInt(parts[0]);
  if (a === null) return string;
  const b = pyInt(parts[1]);
  if (b === null) return string;
  if (string !== `${a}/${b}`) throw new StripFailure('AssertionError in _fix_a_slash_b');
  return `\\frac{${a}}{${b}}`;
}

// _remove_right_units: everything before "\text{ " (which the MATH data only uses for units)
function removeRightUnits(string: string): string {
  if (!string.includes('\\text{ ')) return string;
  const splits = string.split('\\text{ ');
  if (splits.length !== 2) throw new StripFailure('AssertionError in _remove_right_units');
  return splits[0];
}

// _fix_sqrt: \sqrt3 -> \sqrt{3}
function fixSqrt(string: string): string {
  if (!string.includes('\\sqrt')) return string;
  const splits = string.split('\\sqrt');
  let out = splits[0];
  for (const split of splits.slice(1)) {
    if (!split || split[0] !== '{') {
      const cps = codePoints(split);
      out += '\\sqrt{' + (cps[0] ?? '') + '}' + cps.slice(1).join('');
    } else out += '\\sqrt' + split;
  }
  return out;
}

// _strip_string
function stripString(input: string): string {
  let s = input.replaceAll('\n', '').replaceAll('\\!', '').replaceAll('\\\\', '\\');
  s = s.replaceAll('tfrac', 'frac').replaceAll('dfrac', 'frac');
  s = s.replaceAll('\\left', '').replaceAll('\\right', '');
  s = s.replaceAll('^{\\circ}', '').replaceAll('^\\circ', '');
  s = s.replaceAll('\\$', '');
  s = removeRightUnits(s);
  s = s.replaceAll('\\%', '');
  s = s.replaceAll(' .', ' 0.').replaceAll('{.', '{0.');
  if (s.length === 0) return s;
  if (s[0] === '.') s = '0' + s;
  const eq = s.split('=');
  if (eq.length === 2 && pyLen(eq[0]) <= 2) s = eq[1];
  s = fixSqrt(s);
  s = s.replaceAll(' ', '');
  s = fixFracs(s);
  if (s === '0.5') s = '\\frac{1}{2}';
  return fixASlashB(s);
}

/** `normalize_answer` (mathd): strip, drop an enclosing \text{}, then `_strip_string`; the raw answer on failure. */
export function normalizeAnswer(answer: string): string {
  let a = pyStrip(answer);
  const inner = enclosingText(a);
  if (inner !== null) a = pyStrip(inner);
  try {
    return stripString(a);
  } catch (e) {
    if (e instanceof StripFailure) return a;
    throw e;
  }
}

const UNITS = ['degree', 'cm', 'centimeter', 'meter', 'mile', 'second', 'minute', 'hour', 'day', 'week', 'month', 'year', 'foot', 'feet', 'inch', 'yard'];
const UNIT_RES = UNITS.map((u) => new RegExp(`${u}(es)?(s)? *(\\^[0-9]+)?`, 'g'));
// r"(\d)(,)(\d\d\d)($|\D)" with Python's Unicode \d and its `$` (end, or before a final newline)
const PROPER_COMMA = /(\p{Nd})(,)(\p{Nd}{3})((?=\n?$)|\P{Nd})/gu;

/** `_strip_properly_formatted_commas`: drop thousands separators, pass after pass, until nothing changes. */
export function stripProperCommas(expr: string): string {
  for (;;) {
    const next = expr.replace(PROPER_COMMA, '$1$3$4');
    if (next === expr) return next;
    expr = next;
  }
}

/** `_str_is_int`: a float (after dropping thousands separators) within 1e-7 of an integer. */
export function strIsInt(x: string): boolean {
  const f = pyFloat(stripProperCommas(x));
  return f !== null && isNearInteger(f);
}

/** `_parse_latex`: LaTeX to text via pylatexenc, then the cookbook's symbol replacements. */
function parseLatex(expr: string): string {
  let e = expr.replaceAll('\\tfrac', '\\frac').replaceAll('\\dfrac', '\\frac').replaceAll('\\frac', ' \\frac');
  e = latexToText(e);
  e = e.replaceAll('\u221a', 'sqrt').replaceAll('\u03c0', 'pi').replaceAll('\u221e', 'inf').replaceAll('\u222a', 'U');
  e = e.replaceAll('\u00b7', '*').replaceAll('\u00d7', '*');
  return pyStrip(e);
}

/** `_normalize`: the normalisation applied before the element-wise comparison. */
export function normalizeExpression(input: string): string {
  return normalize(input, false) as string;
}

/** `_normalize`, or null where its LaTeX step would run into the cookbook's grading timeout (LatexTooLargeError). */
export function normalizeExpressionInTime(input: string): string | null {
  return normalize(input, true);
}

function normalize(input: string, nullOnTimeout: boolean): string | null {
  let expr = input;
  const inner = enclosingText(expr);
  if (inner !== null) expr = inner;
  expr = expr.replaceAll('\\%', '%').replaceAll('\\$', '$').replaceAll('$', '').replaceAll('%', '');
  expr = expr.replaceAll(' or ', ' , ').replaceAll(' and ', ' , ');
  expr = expr.replaceAll('million', '*10^6').replaceAll('billion', '*10^9').replaceAll('trillion', '*10^12');
  for (const re of UNIT_RES) expr = expr.replace(re, '');
  expr = expr.replace(/\^ *\\circ/g, '');
  if (expr.length > 0 && expr[0] === '{' && expr.endsWith('}')) expr = expr.slice(1, -1);
  expr = expr.replace(/,\\! */g, '');
  const f = pyFloat(expr);
  if (f !== null && isNearInteger(f)) expr = roundedIntString(f);
  if (expr.includes('\\')) {
    try {
      expr = parseLatex(expr);
    } catch (e) {
      if (nullOnTimeout && e instanceof LatexTooLargeError) return null;
      // contextlib.suppress(Exception): keep the expression as it was
    }
  }
  expr = expr.replace(/- */g, '-');
  expr = expr.replace(/([0-9]) +([0-9])/g, '$1+$2');
  expr = expr.replaceAll(' ', '').replaceAll('{', '').replaceAll('}', '');
  expr = expr.toLowerCase();
  if (strIsInt(expr)) {
    const g = pyFloat(expr.replaceAll(',', ''));
    if (g !== null) expr = truncatedIntString(g);
  }
  return expr;
}
