// The update-direction check of the correctness preflight: one optim_step at the spec's learning rate on a
// throw-away copy of the shared initial state must move the importance-sampling surrogate on the fixed batch as
// its gradient says. Evaluated here from numbers the backend returned (pure, float64).

/** How far the measured move may be from what the gradient predicts. */
export const UPDATE_TOLERANCES = {
  /**
   * |dL - sum_t (g_t + g'_t)/2 dlogp_t| <= linear_rtol * |that sum|: the step stays where the gradients at its two
   * ends describe the move (the trapezoid rule, exact to second order in dlogp: an error of about dlogp^2/12 of a
   * token's term, so 10 % allows moves of about 1 nat when every token moves that much, and a step 10x too large
   * fails). The first-order sum alone is within 10 % only for small moves, which the embedded model's lr of 5e-4
   * (spec revision 1) exceeds: its largest token moves 1.47 nat, the surrogate is 17 % off first order and 3.3 %
   * off second order.
   */
  linear_rtol: 0.1,
  /**
   * |dL_warm - dL| <= adam_rtol * |dL|: AdamW's bias correction makes the step after a first step on the same
   * gradient equal to a first step (m_hat = g, v_hat = g^2 at t = 2), so a second copy whose first optim_step is at
   * lr 0 (the moments and the step count advance, the weights stay: the next gradient is the same) and whose second
   * is at lr must move the surrogate as the fresh copy does, to rounding; a step applied twice, a step count that
   * does not advance or bias correction left out changes it by 30 % or more. (A first step at a small lr > 0 is not
   * enough: LoRA's A matrices have zero gradient while B is zero, so the warm copy alone would move them.)
   */
  adam_rtol: 0.02,
  warm_lr_fraction: 0,
} as const;

export interface UpdateDirectionInputs {
  /** surrogate L at the shared init (float64, from the backend's logprobs) */
  lossBefore: number;
  /** L after one optim_step at the spec's learning rate */
  lossAfter: number;
  /** dL/dlogp at every target position before the step, flattened in datum then position order */
  gradient: readonly number[];
  /** dL/dlogp at the same positions after the step */
  gradientAfter: readonly number[];
  /** logp_after - logp_before at the same positions */
  logprobChange: readonly number[];
  /** the second copy: L after an optim_step at warm_lr_fraction * lr and then one at lr, minus L before both */
  warmCopyDelta: number;
}

export interface UpdateDirection {
  delta_loss: number;
  /** first order: sum_t dL/dlogp_t * (logp_after_t - logp_before_t); its sign says whether the step followed -gradient */
  first_order_delta_loss: number;
  /** second order (trapezoid): sum_t (dL/dlogp_t before + after)/2 * (logp_after_t - logp_before_t) */
  predicted_delta_loss: number;
  warm_copy_delta_loss: number;
  linear_rel_error: number;
  warm_copy_rel_error: number;
  max_abs_logprob_change: number;
  pass: boolean;
  failures: string[];
}

export function evaluateUpdateDirection(i: UpdateDirectionInputs): UpdateDirection {
  if (i.gradient.length !== i.logprobChange.length || i.gradientAfter.length !== i.logprobChange.length) {
    throw new Error(`update direction: ${i.gradient.length} and ${i.gradientAfter.length} gradient entries for ${i.logprobChange.length} logprob changes`);
  }
  let firstOrder = 0;
  let predicted = 0;
  let maxChange = 0;
  for (let t = 0; t < i.gradient.length; t++) {
    // dL_1 = sum_t g_t * dlogp_t
    firstOrder += i.gradient[t] * i.logprobChange[t];
    // dL_pred = sum_t (g_t + g'_t) / 2 * dlogp_t
    predicted += 0.5 * (i.gradient[t] + i.gradientAfter[t]) * i.logprobChange[t];
    maxChange = Math.max(maxChange, Math.abs(i.logprobChange[t]));
  }
  const delta = i.lossAfter - i.lossBefore;
  const linearRel = Math.abs(delta - predicted) / Math.abs(predicted);
  const warmRel = Math.abs(i.warmCopyDelta - delta) / Math.abs(delta);
  const failures: string[] = [];
  if (!(firstOrder < 0)) failures.push(`the gradient predicts no descent (sum g * dlogp = ${firstOrder}): the step did not follow -gradient`);
  if (!(delta < 0)) failures.push(`the surrogate rose by ${delta} after one optim_step (it must fall along -gradient)`);
  if (!(linearRel <= UPDATE_TOLERANCES.linear_rtol)) failures.push(`the surrogate moved by ${delta}, the gradients at the step's two ends predict ${predicted} (relative error ${linearRel} > ${UPDATE_TOLERANCES.linear_rtol})`);
  if (!(warmRel <= UPDATE_TOLERANCES.adam_rtol)) {
    failures.push(`a copy stepped at lr ${UPDATE_TOLERANCES.warm_lr_fraction} x lr then at lr moved the surrogate by ${i.warmCopyDelta}, a fresh copy by ${delta} (relative difference ${warmRel} > ${UPDATE_TOLERANCES.adam_rtol}): not one AdamW step per optim_step`);
  }
  return {
    delta_loss: delta,
    first_order_delta_loss: firstOrder,
    predicted_delta_loss: predicted,
    warm_copy_delta_loss: i.warmCopyDelta,
    linear_rel_error: linearRel,
    warm_copy_rel_error: warmRel,
    max_abs_logprob_change: maxChange,
    pass: failures.length === 0,
    failures,
  };
}
