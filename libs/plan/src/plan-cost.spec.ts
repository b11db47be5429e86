// The cost of the published spec recomputed by hand from its fields (steps 40; grpo_gs8 8 prompts x 8; gs1_kernel
// 64 x 1; batch 64; max_tokens 512; max_seq_len 1024; 1319 eval items; pilot 2 + 1 steps, calibration 2 more,
// held-out 64 x 8; dev curve 5 points x 128 items), with P = 512 prompt and S = 512 sampled tokens.
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { loadSpecText, type ExperimentSpec } from '@rx/spec';
import { budgetCharges, upperBoundTokens } from './budget-charges';
import { planCost, tokenSum, totalTokens } from './plan-cost';

function published(): ExperimentSpec {
  const r = loadSpecText(readFileSync(resolve(__dirname, '..', '..', '..', 'specs', 'gs1-vs-grpo.json'), 'utf8'));
  if (!r.ok) throw new Error(r.errors.join('\n'));
  return r.spec;
}

describe('planCost', () => {
  const P = 512;
  const S = 512;
  const cost = planCost(published(), { promptTokens: P, sampledTokens: S, source: 'test' });

  it('counts the calls of each arm by hand', () => {
    // grpo_gs8: 40 training + 1 pilot steps of 8 sample calls; 5 x 128 dev items; 1319 eval items; the probe's 1 prompt
    expect(cost.per_arm.grpo_gs8.calls).toEqual({ sample: 41 * 8 + 640 + 1319 + 1, forward_backward: 41 + 1 + 1, optim_step: 41 + 1, compute_logprobs: 4 });
    // gs1_kernel: 40 training + 4 pilot steps (2 at 0.5, 2 of the calibration) of 64 calls; the probe's 8 prompts
    expect(cost.per_arm.gs1_kernel.calls).toEqual({ sample: 44 * 64 + 640 + 1319 + 8, forward_backward: 44 + 1 + 1, optim_step: 44 + 1, compute_logprobs: 4 });
    // 2 per step, the final sampler weights, the probe's and the restored copy's
    expect(cost.per_arm.grpo_gs8.checkpoints).toBe(2 * 41 + 3);
    expect(cost.per_arm.gs1_kernel.checkpoints).toBe(2 * 44 + 3);
    expect(cost.shared.calls).toEqual({ sample: 1319 + 64, forward_backward: 6, optim_step: 3, compute_logprobs: 0 });
  });

  it('counts the tokens of each arm by hand', () => {
    const grpo = cost.per_arm.grpo_gs8.tokens;
    expect(grpo.sampled).toBe(41 * 64 * S + 640 * S + 1319 * S + 8 * S);
    expect(grpo.prefill).toBe(41 * 8 * P + 640 * P + 1319 * P + 1 * P + 4 * (P + S));
    expect(grpo.trained).toBe(41 * 64 * (P + S) + (P + S));
    const gs1 = cost.per_arm.gs1_kernel.tokens;
    expect(gs1.sampled).toBe(44 * 64 * S + 640 * S + 1319 * S + 8 * S);
    expect(gs1.prefill).toBe(44 * 64 * P + 640 * P + 1319 * P + 8 * P + 4 * (P + S));
    expect(gs1.trained).toBe(44 * 64 * (P + S) + (P + S));
    expect(cost.shared.tokens).toEqual({ sampled: 1319 * S + 64 * 8 * S, prefill: 1319 * P + 64 * P, trained: 6 * 64 * (P + S) });
    expect(cost.total.tokens.sampled).toBe(grpo.sampled + gs1.sampled + cost.shared.tokens.sampled);
    expect(totalTokens(cost.total)).toBe(16_039_424);
  });

  it('scales with the spec: twice the steps, twice the training share', () => {
    const spec = published();
    const longer = planCost({ ...spec, steps: 80 }, { promptTokens: P, sampledTokens: S, source: 'test' });
    expect(longer.per_arm.grpo_gs8.calls.forward_backward - cost.per_arm.grpo_gs8.calls.forward_backward).toBe(40);
    expect(longer.per_arm.gs1_kernel.tokens.trained - cost.per_arm.gs1_kernel.tokens.trained).toBe(40 * 64 * (P + S));
    // dev points: 0, 10, ..., 70 and the final weights = 9 instead of 5
    expect(longer.per_arm.grpo_gs8.calls.sample - cost.per_arm.grpo_gs8.calls.sample).toBe(40 * 8 + 4 * 128);
  });
});

describe('budgetCharges', () => {
  const P = 512;
  const S = 512;
  const charges = budgetCharges(published(), { promptTokens: P, sampledTokens: S, source: 'test' });

  it('charges a step of each arm, one evaluation and the fixed rest by hand', () => {
    expect(charges.step.grpo_gs8).toEqual({ sampled: 64 * S, prefill: 8 * P, trained: 64 * (P + S) });
    expect(charges.step.gs1_kernel).toEqual({ sampled: 64 * S, prefill: 64 * P, trained: 64 * (P + S) });
    expect(charges.evaluation).toEqual({ sampled: 1319 * S, prefill: 1319 * P, trained: 0 });
    // fixed: per arm the dev curve (5 x 128 items), the first-update check (4 x (P + S) prefill) and the probe
    // (grpo 1 prompt x 8, gs1 8 prompts x 1, one datum trained); shared the held-out draws (64 x 8) and the
    // correctness checks (6 x 64 rollouts trained)
    expect(charges.fixed).toEqual({
      sampled: 2 * 640 * S + 8 * S + 8 * S + 64 * 8 * S,
      prefill: 2 * 640 * P + 2 * 4 * (P + S) + 1 * P + 8 * P + 64 * P,
      trained: 2 * (P + S) + 6 * 64 * (P + S),
    });
  });

  it('adds up to the plan: fixed + steps x (40 + pilot) + 3 evaluations = the total', () => {
    const sum = tokenSum(charges.fixed) + tokenSum(charges.step.grpo_gs8) * 41 + tokenSum(charges.step.gs1_kernel) * 44 + 3 * tokenSum(charges.evaluation);
    expect(sum).toBe(16_039_424);
  });

  it("rx plan's upper bounds: prompt max_seq_len - max_tokens, sampled max_tokens", () => {
    expect(upperBoundTokens(published())).toMatchObject({ promptTokens: 512, sampledTokens: 512 });
  });
});
