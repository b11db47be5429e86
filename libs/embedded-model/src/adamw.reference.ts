// Independent reference for adamw.ts, written from torch.optim.AdamW's documented algorithm (decoupled decay
// first, then the bias-corrected step with eps added after the square root), one scalar at a time.

export interface ScalarAdamState {
  m: number;
  v: number;
}

/** returns the parameter after step t (1-based) of AdamW on one scalar */
export function referenceAdamWScalar(p: number, g: number, s: ScalarAdamState, t: number, lr: number, beta1: number, beta2: number, eps: number, wd: number): number {
  let x = p * (1 - lr * wd);
  s.m = beta1 * s.m + (1 - beta1) * g;
  s.v = beta2 * s.v + (1 - beta2) * g * g;
  const biasCorrection1 = 1 - beta1 ** t;
  const biasCorrection2 = 1 - beta2 ** t;
  const stepSize = lr / biasCorrection1;
  const denom = Math.sqrt(s.v) / Math.sqrt(biasCorrection2) + eps;
  x -= stepSize * (s.m / denom);
  return x;
}
