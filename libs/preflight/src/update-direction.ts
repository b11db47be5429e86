// The update-direction check of the correctness preflight: one optim_step at the spec's learning rate on a
// throw-away copy of the shared initial state must move the importance-sampling surrogate on the fixed batch as
// its gradient says. Evaluated here from numbers the backend returned (pure, float64).

/** How far the measured move may be from what the gradient predicts. */
export const UPDATE_TOLERANCES = {
  /** |dL - sum_t g_t dlogp_t| <= linear_rtol * |sum_t g_t dlogp_t|: one small step is in the gradient's linear regime */
  linear_rtol: 0.1,
  /**
   * |dL_warm - dL| <= adam_rtol * |dL|: AdamW's bias correction makes the step after a first step on the same
   * gradient equal to a first step (m_hat = g, v_hat = g^2 at t = 2), so a second copy whose first step is at
   * warm_lr_fraction * lr (it moves the weights by 0.1 % of a step) and whose second is at lr must move the surrogate
   * by the same amount to about 0.1 %; a step applied twice or a wrong step count changes it by 10 % or more
   */
  adam_rtol: 0.02,
  warm_lr_fraction: 1e-3,
} as const;

export interface UpdateDirectionInputs {
  /** surrogate L at the shared init (float64, from the backend's logprobs) */
  lossBefore: number;
  /** L after one optim_step at the spec's learning rate */
  lossAfter: number;
  /** dL/dlogp at every target position before the step, flattened in datum then position order */
  gradient: readonly number[];
  /** logp_after - logp_before at the same positions */
  logprobChange: readonly number[];
  /** the second copy: L after an optim_step at warm_lr_fraction * lr and then one at lr, minus L before both */
  warmCopyDelta: number;
}

export interface UpdateDirection {
  delta_loss: number;
  /** first order: sum_t dL/dlogp_t * (logp_after_t - logp_before_t) */
  predicted_delta_loss: number;
  warm_copy_delta_loss: number;
  linear_rel_error: number;
  warm_copy_rel_error: number;
  max_abs_logprob_change: number;
  pass: boolean;
  failures: string[];
}

export function evaluateUpdateDirection(i: UpdateDirectionInputs): UpdateDirection {
  if (i.gradient.length !== i.logprobChange.length) throw new Error(`update direction: ${i.gradient.length} gradient entries for ${i.logprobChange.length} logprob changes`);
  // dL_pred = sum_t g_t * dlogp_t
  let predicted = 0;
  let maxChange = 0;
  for (let t = 0; t < i.gradient.length; t++) {
    predicted += i.gradient[t] * i.logprobChange[t];
    maxChange = Math.max(maxChange, Math.abs(i.logprobChange[t]));
  }
  const delta = i.lossAfter - i.lossBefore;
  const linearRel = Math.abs(delta - predicted) / Math.abs(predicted);
  const warmRel = Math.abs(i.warmCopyDelta - delta) / Math.abs(delta);
  const failures: string[] = [];
  if (!(predicted < 0)) failures.push(`the gradient predicts no descent (sum g * dlogp = ${predicted}): the step did not follow -gradient`);
  if (!(delta < 0)) failures.push(`the surrogate rose by ${delta} after one optim_step (it must fall along -gradient)`);
  if (!(linearRel <= UPDATE_TOLERANCES.linear_rtol)) failures.push(`the surrogate moved by ${delta}, the gradient predicts ${predicted} (relative error ${linearRel} > ${UPDATE_TOLERANCES.linear_rtol})`);
  if (!(warmRel <= UPDATE_TOLERANCES.adam_rtol)) {
    failures.push(`a copy stepped at ${UPDATE_TOLERANCES.warm_lr_fraction} * lr then at lr moved the surrogate by ${i.warmCopyDelta}, a fresh copy by ${delta} (relative difference ${warmRel} > ${UPDATE_TOLERANCES.adam_rtol}): not one AdamW step per optim_step`);
  }
  return {
    delta_loss: delta,
    predicted_delta_loss: predicted,
    warm_copy_delta_loss: i.warmCopyDelta,
    linear_rel_error: linearRel,
    warm_copy_rel_error: warmRel,
    max_abs_logprob_change: maxChange,
    pass: failures.length === 0,
    failures,
  };
}
