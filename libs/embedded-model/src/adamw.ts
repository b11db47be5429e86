// AdamW on float64 parameter arrays, as torch.optim.AdamW (and Tinker's AdamParams) define it.
import { zerosLike, type ParamSet } from './param-set';

export interface AdamWHyper {
  learningRate: number;
  beta1: number;
  beta2: number;
  eps: number;
  weightDecay: number;
}

export interface AdamWState {
  m: ParamSet;
  v: ParamSet;
  /** optimiser steps taken */
  step: number;
}

export function initAdamW(params: ParamSet): AdamWState {
  return { m: zerosLike(params), v: zerosLike(params), step: 0 };
}

export function checkAdamWHyper(h: AdamWHyper): void {
  const bad = (what: string, v: number) => {
    throw new Error(`AdamW ${what} is invalid: ${v}`);
  };
  if (!Number.isFinite(h.learningRate) || h.learningRate < 0) bad('learning rate', h.learningRate);
  if (!(h.beta1 >= 0 && h.beta1 < 1)) bad('beta1', h.beta1);
  if (!(h.beta2 >= 0 && h.beta2 < 1)) bad('beta2', h.beta2);
  if (!(h.eps > 0)) bad('eps', h.eps);
  if (!Number.isFinite(h.weightDecay) || h.weightDecay < 0) bad('weight decay', h.weightDecay);
}

/**
 * One step, in place. t = step + 1; m = b1 m + (1 - b1) g; v = b2 v + (1 - b2) g^2;
 * p = p - lr (m / (1 - b1^t)) / (sqrt(v / (1 - b2^t)) + eps) - lr wd p
 */
export function adamwStep(params: ParamSet, grads: ParamSet, state: AdamWState, h: AdamWHyper): void {
  checkAdamWHyper(h);
  const t = state.step + 1;
  const bc1 = 1 - Math.pow(h.beta1, t);
  const bc2 = 1 - Math.pow(h.beta2, t);
  params.forEach((p, i) => {
    const g = grads[i].data;
    const m = state.m[i].data;
    const v = state.v[i].data;
    const x = p.data;
    for (let j = 0; j < x.length; j++) {
      m[j] = h.beta1 * m[j] + (1 - h.beta1) * g[j];
      v[j] = h.beta2 * v[j] + (1 - h.beta2) * g[j] * g[j];
      const update = m[j] / bc1 / (Math.sqrt(v[j] / bc2) + h.eps);
      x[j] = x[j] - h.learningRate * update - h.learningRate * h.weightDecay * x[j];
    }
  });
  state.step = t;
}
