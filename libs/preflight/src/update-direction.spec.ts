import { evaluateUpdateDirection, UPDATE_TOLERANCES } from './update-direction';

// a surrogate L = -sum_t exp(lp_t) * A_t, moved along -gradient by `size` nats per token
const A = [0.5, -0.25, 1, -1];
const lp0 = [-1, -2, -0.5, -3];
const gradientAt = (lp: number[]) => lp.map((l, t) => -Math.exp(l) * A[t]);
const loss = (lp: number[]) => -lp.reduce((s, l, t) => s + Math.exp(l) * A[t], 0);
const grad0 = gradientAt(lp0);
const step = (size: number) => lp0.map((l, t) => l - size * Math.sign(grad0[t]));

function inputs(lp1: number[], warmCopyDelta = loss(lp1) - loss(lp0)) {
  return { lossBefore: loss(lp0), lossAfter: loss(lp1), gradient: grad0, gradientAfter: gradientAt(lp1), logprobChange: lp1.map((x, t) => x - lp0[t]), warmCopyDelta };
}

describe('evaluateUpdateDirection', () => {
  it('passes a small step down the gradient repeated exactly by the warmed copy', () => {
    const r = evaluateUpdateDirection(inputs(step(1e-3)));
    expect(r.delta_loss).toBeLessThan(0);
    expect(r.linear_rel_error).toBeLessThan(1e-6);
    expect([r.pass, r.failures]).toEqual([true, []]);
  });

  it('passes a step of 0.65 nat per token, which the first-order sum alone misses by more than 10 %', () => {
    const r = evaluateUpdateDirection(inputs(step(0.65)));
    expect(Math.abs(r.delta_loss - r.first_order_delta_loss) / Math.abs(r.first_order_delta_loss)).toBeGreaterThan(UPDATE_TOLERANCES.linear_rtol);
    expect(r.linear_rel_error).toBeLessThan(0.05);
    expect([r.pass, r.failures]).toEqual([true, []]);
  });

  it('fails a step of 3 nats per token (an lr far too large) on the magnitude', () => {
    const r = evaluateUpdateDirection(inputs(step(3)));
    expect(r.pass).toBe(false);
    expect(r.failures.join()).toMatch(/predict/);
  });

  it('fails a step up the gradient (a sign-flipped loss) on the sign', () => {
    const r = evaluateUpdateDirection(inputs(step(-1e-3)));
    expect(r.pass).toBe(false);
    expect(r.failures.join()).toMatch(/rose/);
    expect(r.failures.join()).toMatch(/no descent/);
  });

  it('fails when the warmed copy moves 1.5x (a step applied twice)', () => {
    const lp1 = step(1e-3);
    const r = evaluateUpdateDirection(inputs(lp1, 1.5 * (loss(lp1) - loss(lp0))));
    expect(r.pass).toBe(false);
    expect(r.failures.join()).toMatch(/not one AdamW step/);
  });

  it('fails when the loss moved far from what the logprob change predicts', () => {
    const lp1 = step(1e-3);
    const d = loss(lp1) - loss(lp0);
    const r = evaluateUpdateDirection({ ...inputs(lp1, 2 * d), lossAfter: loss(lp0) + 2 * d });
    expect(r.failures.join()).toMatch(/predict/);
  });
});
