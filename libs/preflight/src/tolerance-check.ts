// Comparison of a computed quantity with its reference under the spec's correctness_preflight tolerances.

export interface Tolerance {
  atol: number;
  rtol: number;
  min_cosine?: number;
}

export interface ToleranceCheck {
  max_abs_error: number;
  /** max |e_k| of the reference: the scale the errors are measured against */
  reference_max_abs: number;
  relative_l2_error: number;
  cosine: number;
  pass: boolean;
  /** why it failed, empty when it passed */
  failures: string[];
}

/** pass iff |a_k - e_k| <= atol + rtol * |e_k| for every k (numpy.allclose) and cos(a, e) >= min_cosine */
export function checkTolerance(actual: readonly number[], expected: readonly number[], tol: Tolerance): ToleranceCheck {
  if (actual.length !== expected.length) {
    const reference_max_abs = expected.reduce((m, e) => Math.max(m, Math.abs(e)), 0);
    return { max_abs_error: Infinity, reference_max_abs, relative_l2_error: Infinity, cosine: NaN, pass: false, failures: [`length ${actual.length} != ${expected.length}`] };
  }
  let maxAbs = 0;
  let refMaxAbs = 0;
  let diff2 = 0;
  let exp2 = 0;
  let act2 = 0;
  let dot = 0;
  let worstExcess = -Infinity;
  for (let k = 0; k < actual.length; k++) {
    const a = actual[k];
    const e = expected[k];
    const err = Math.abs(a - e);
    if (!(err <= maxAbs)) maxAbs = err; // NaN propagates
    refMaxAbs = Math.max(refMaxAbs, Math.abs(e));
    diff2 += (a - e) * (a - e);
    exp2 += e * e;
    act2 += a * a;
    dot += a * e;
    worstExcess = Math.max(worstExcess, err - (tol.atol + tol.rtol * Math.abs(e)));
    if (Number.isNaN(err)) worstExcess = NaN;
  }
  // relative L2 = ||a - e|| / ||e||; 0 when both are 0, Infinity when only e is 0
  const relL2 = exp2 === 0 ? (diff2 === 0 ? 0 : Infinity) : Math.sqrt(diff2) / Math.sqrt(exp2);
  // cosine = a.e / (||a|| ||e||); two zero vectors agree (1), one zero vector does not (0)
  const cosine = act2 === 0 || exp2 === 0 ? (act2 === 0 && exp2 === 0 ? 1 : 0) : dot / Math.sqrt(act2 * exp2);
  const failures: string[] = [];
  if (!(worstExcess <= 0)) failures.push(`max abs error ${maxAbs} exceeds atol ${tol.atol} + rtol ${tol.rtol} * |reference|`);
  if (tol.min_cosine !== undefined && !(cosine >= tol.min_cosine)) failures.push(`cosine ${cosine} below ${tol.min_cosine}`);
  return { max_abs_error: maxAbs, reference_max_abs: refMaxAbs, relative_l2_error: relL2, cosine, pass: failures.length === 0, failures };
}
