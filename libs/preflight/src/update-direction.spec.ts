import { evaluateUpdateDirection } from './update-direction';

// a surrogate L = -sum_t exp(lp_t) * A_t moved by a small step along -gradient
const A = [0.5, -0.25, 1, -1];
const lp0 = [-1, -2, -0.5, -3];
const grad = lp0.map((l, t) => -Math.exp(l) * A[t]);
const loss = (lp: number[]) => -lp.reduce((s, l, t) => s + Math.exp(l) * A[t], 0);
const step = (scale: number) => lp0.map((l, t) => l - scale * Math.sign(grad[t]) * 1e-3);

describe('evaluateUpdateDirection', () => {
  it('passes a small step down the gradient repeated exactly by the warmed copy', () => {
    const lp1 = step(1);
    const r = evaluateUpdateDirection({ lossBefore: loss(lp0), lossAfter: loss(lp1), gradient: grad, logprobChange: lp1.map((x, t) => x - lp0[t]), warmCopyDelta: loss(lp1) - loss(lp0) });
    expect(r.delta_loss).toBeLessThan(0);
    expect(r.linear_rel_error).toBeLessThan(1e-2);
    expect([r.pass, r.failures]).toEqual([true, []]);
  });

  it('fails a step up the gradient (a sign-flipped loss) on the sign', () => {
    const lp1 = step(-1);
    const r = evaluateUpdateDirection({ lossBefore: loss(lp0), lossAfter: loss(lp1), gradient: grad, logprobChange: lp1.map((x, t) => x - lp0[t]), warmCopyDelta: loss(lp1) - loss(lp0) });
    expect(r.pass).toBe(false);
    expect(r.failures.join()).toMatch(/rose/);
  });

  it('fails when the warmed copy moves 1.5x (a step applied twice)', () => {
    const lp1 = step(1);
    const d = loss(lp1) - loss(lp0);
    const r = evaluateUpdateDirection({ lossBefore: loss(lp0), lossAfter: loss(lp1), gradient: grad, logprobChange: lp1.map((x, t) => x - lp0[t]), warmCopyDelta: 1.5 * d });
    expect(r.pass).toBe(false);
    expect(r.failures.join()).toMatch(/not one AdamW step/);
  });

  it('fails when the loss moved far from what the logprob change predicts', () => {
    const lp1 = step(1);
    const d = loss(lp1) - loss(lp0);
    const r = evaluateUpdateDirection({ lossBefore: loss(lp0), lossAfter: loss(lp0) + 2 * d, gradient: grad, logprobChange: lp1.map((x, t) => x - lp0[t]), warmCopyDelta: 2 * d });
    expect(r.failures.join()).toMatch(/predicts/);
  });
});
