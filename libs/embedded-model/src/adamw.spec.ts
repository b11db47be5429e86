import { adamwStep, initAdamW } from './adamw';
import { referenceAdamWScalar, type ScalarAdamState } from './adamw.reference';
import type { ParamSet } from './param-set';
import { Prng } from './prng';

describe('adamwStep', () => {
  it.each([
    [0, 'no weight decay'],
    [0.1, 'weight decay 0.1'],
  ])('matches the scalar float64 reference over 6 steps (%s, %s)', (wd) => {
    const rng = new Prng(3);
    const params: ParamSet = [
      { name: 'a', shape: [3], data: Float64Array.from([0.5, -1.2, 0]) },
      { name: 'b', shape: [2, 2], data: Float64Array.from([2, -0.01, 0.3, 1e-4]) },
    ];
    const ref = params.map((p) => Array.from(p.data));
    const refState: ScalarAdamState[][] = params.map((p) => Array.from(p.data, () => ({ m: 0, v: 0 })));
    const state = initAdamW(params);
    const h = { learningRate: 4e-2, beta1: 0.9, beta2: 0.95, eps: 1e-8, weightDecay: wd };
    for (let t = 1; t <= 6; t++) {
      const grads: ParamSet = params.map((p) => ({ ...p, data: Float64Array.from(p.data, () => (t === 3 ? 0 : rng.normal())) }));
      adamwStep(params, grads, state, h);
      ref.forEach((r, i) => r.forEach((x, j) => (r[j] = referenceAdamWScalar(x, grads[i].data[j], refState[i][j], t, h.learningRate, h.beta1, h.beta2, h.eps, wd))));
      params.forEach((p, i) => p.data.forEach((x, j) => expect(Math.abs(x - ref[i][j])).toBeLessThanOrEqual(1e-12 * Math.max(1, Math.abs(ref[i][j])))));
    }
    expect(state.step).toBe(6);
  });

  it('leaves parameters unchanged on a zero gradient without decay', () => {
    const params: ParamSet = [{ name: 'a', shape: [2], data: Float64Array.from([0.25, -3]) }];
    const state = initAdamW(params);
    adamwStep(params, [{ name: 'a', shape: [2], data: new Float64Array(2) }], state, { learningRate: 1, beta1: 0.9, beta2: 0.95, eps: 1e-8, weightDecay: 0 });
    expect(Array.from(params[0].data)).toEqual([0.25, -3]);
  });

  it('rejects invalid hyper-parameters', () => {
    const params: ParamSet = [{ name: 'a', shape: [1], data: Float64Array.from([1]) }];
    const run = (h: Partial<Parameters<typeof adamwStep>[3]>) => () =>
      adamwStep(params, [{ name: 'a', shape: [1], data: Float64Array.from([1]) }], initAdamW(params), { learningRate: 1e-3, beta1: 0.9, beta2: 0.95, eps: 1e-8, weightDecay: 0, ...h });
    expect(run({ beta1: 1 })).toThrow('beta1');
    expect(run({ eps: 0 })).toThrow('eps');
    expect(run({ learningRate: Number.NaN })).toThrow('learning rate');
  });
});
