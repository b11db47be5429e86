// What a spec will cost before it runs: tokens, calls and checkpoints per arm and in all, from the spec (steps,
// arms' groups, max_tokens, eval size, the pilot and its calibration, the dev curve) and two per-item token
// figures (prompt tokens, sampled tokens per completion) that are either assumed (and said so) or measured on a run.
// The formulas, per arm a with G_a prompts of g_a samples (B = G_a g_a rollouts) per step, P prompt tokens and S
// sampled tokens per completion:
//   training step:  G_a sample calls, B S sampled, G_a P prefill, B (P + S) trained; 1 forward_backward, 1 optim_step;
//                   2 checkpoints (sampler weights before the step, the state after it)
//   training:       steps x step, + 1 checkpoint (final sampler weights) + 4 compute_logprobs (first-update check)
//   dev curve:      (floor((steps - 1) / every) + 2) points x D items: one greedy sample call each, D S sampled, D P prefill
//   pilot:          pilot.steps treatment steps + 1 baseline step + held-out draws (64 prompts x 8: 64 calls, 512 S sampled,
//                   64 P prefill); the calibration (worst case, counted): pilot.steps more treatment steps
//   evaluation:     base and both arms: 3 n_eval greedy sample calls, 3 n S sampled, 3 n P prefill
//   preflight:      per arm a probe (1 checkpoint; 1 prompt x g_a samples, or 8 prompts x 1; 1 forward_backward of one datum,
//                   1 optim_step) and the correctness checks (6 forward_backward of batch_size rollouts, 3 optim_steps)
//   shared init:    2 checkpoints (state, sampler weights), per arm 1 checkpoint and 1 forward_backward (restore check)
import { baselineArm, devEvalSettings, pilotSettings, treatmentArm, type ArmSpec, type ExperimentSpec } from '@rx/spec';

export interface TokenAssumptions {
  /** prompt tokens per item, rendered */
  promptTokens: number;
  /** sampled tokens per completion (max_tokens is the upper bound) */
  sampledTokens: number;
  /** where the two figures come from, in words */
  source: string;
}

export interface WorkCount {
  tokens: { sampled: number; prefill: number; trained: number };
  calls: { forward_backward: number; optim_step: number; sample: number; compute_logprobs: number };
  checkpoints: number;
  /** training steps (pilot steps included) */
  steps: number;
  /** greedy items scored (evaluation, dev curve, held-out draws count as sample calls, not here) */
  eval_items: number;
}

export interface CostPlan {
  per_arm: Record<string, WorkCount>;
  /** what no one arm owns: the base model's evaluation, the held-out draws, the correctness checks, the shared init */
  shared: WorkCount;
  total: WorkCount;
  assumptions: TokenAssumptions;
}

/** held-out draws of the pilot's baseline_reward_corr gate (pilotSettings: 64 prompts x 8) are read from the spec */
const CORRECTNESS_FORWARD_BACKWARD = 6;
const CORRECTNESS_OPTIM_STEPS = 3;
const FIRST_UPDATE_CHECK_DATUMS = 4;
const PROBE_PROMPTS_ONE_SAMPLE = 8;

export function emptyWork(): WorkCount {
  return { tokens: { sampled: 0, prefill: 0, trained: 0 }, calls: { forward_backward: 0, optim_step: 0, sample: 0, compute_logprobs: 0 }, checkpoints: 0, steps: 0, eval_items: 0 };
}

function add(into: WorkCount, w: WorkCount, times = 1): void {
  into.tokens.sampled += w.tokens.sampled * times;
  into.tokens.prefill += w.tokens.prefill * times;
  into.tokens.trained += w.tokens.trained * times;
  into.calls.forward_backward += w.calls.forward_backward * times;
  into.calls.optim_step += w.calls.optim_step * times;
  into.calls.sample += w.calls.sample * times;
  into.calls.compute_logprobs += w.calls.compute_logprobs * times;
  into.checkpoints += w.checkpoints * times;
  into.steps += w.steps * times;
  into.eval_items += w.eval_items * times;
}

// one training step of an arm: G sample calls, B S sampled, G P prefill, B (P + S) trained, 1 fb, 1 optim, 2 checkpoints
export function stepWork(arm: ArmSpec, a: TokenAssumptions): WorkCount {
  const rollouts = arm.groups_per_batch * arm.group_size;
  const w = emptyWork();
  w.tokens = { sampled: rollouts * a.sampledTokens, prefill: arm.groups_per_batch * a.promptTokens, trained: rollouts * (a.promptTokens + a.sampledTokens) };
  w.calls = { forward_backward: 1, optim_step: 1, sample: arm.groups_per_batch, compute_logprobs: 0 };
  w.checkpoints = 2;
  w.steps = 1;
  return w;
}

// `items` greedy items (or `calls` sampling calls of `perCall` samples): one call each, S sampled per sample, P prefill per call
function samplingWork(calls: number, perCall: number, a: TokenAssumptions, evalItems: number): WorkCount {
  const w = emptyWork();
  w.tokens = { sampled: calls * perCall * a.sampledTokens, prefill: calls * a.promptTokens, trained: 0 };
  w.calls.sample = calls;
  w.eval_items = evalItems;
  return w;
}

/** dev-curve points of an arm: after 0, every, 2 every, ... updates (below steps) and at the final weights */
export function devPoints(steps: number, every: number): number {
  return Math.floor((steps - 1) / every) + 2;
}

export function planCost(spec: ExperimentSpec, a: TokenAssumptions): CostPlan {
  const t = treatmentArm(spec);
  const b = baselineArm(spec);
  const pilot = pilotSettings(spec);
  const dev = devEvalSettings(spec);
  const perArm: Record<string, WorkCount> = {};
  for (const arm of spec.arms) {
    const w = emptyWork();
    add(w, stepWork(arm, a), spec.steps);
    w.checkpoints += 1; // final sampler weights
    w.calls.compute_logprobs += FIRST_UPDATE_CHECK_DATUMS;
    w.tokens.prefill += FIRST_UPDATE_CHECK_DATUMS * (a.promptTokens + a.sampledTokens);
    add(w, samplingWork(devPoints(spec.steps, dev.every) * dev.items, 1, a, devPoints(spec.steps, dev.every) * dev.items));
    // pilot: the treatment's steps at the pre-registered bandwidth and (worst case) the calibration's; the baseline's one step
    add(w, stepWork(arm, a), arm.name === t.name ? 2 * pilot.steps : arm.name === b.name ? 1 : 0);
    // the final evaluation of this arm
    add(w, samplingWork(spec.eval.n_examples, 1, a, spec.eval.n_examples));
    // preflight probe: 1 checkpoint, 1 prompt x g (or 8 x 1) samples, one datum through forward_backward, 1 optim_step
    const probePrompts = arm.group_size > 1 ? 1 : PROBE_PROMPTS_ONE_SAMPLE;
    add(w, samplingWork(probePrompts, arm.group_size, a, 0));
    w.checkpoints += 1;
    w.calls.forward_backward += 1;
    w.calls.optim_step += 1;
    w.tokens.trained += a.promptTokens + a.sampledTokens;
    // shared init: the arm's restored copy (1 checkpoint, 1 forward_backward)
    w.checkpoints += 1;
    w.calls.forward_backward += 1;
    perArm[arm.name] = w;
  }
  const shared = emptyWork();
  add(shared, samplingWork(spec.eval.n_examples, 1, a, spec.eval.n_examples)); // the base model's evaluation
  add(shared, samplingWork(pilot.heldoutPrompts, pilot.heldoutSamplesPerPrompt, a, 0)); // held-out draws
  shared.calls.forward_backward += CORRECTNESS_FORWARD_BACKWARD;
  shared.calls.optim_step += CORRECTNESS_OPTIM_STEPS;
  shared.tokens.trained += CORRECTNESS_FORWARD_BACKWARD * spec.batch_size * (a.promptTokens + a.sampledTokens);
  shared.checkpoints += 2; // the shared initial state and its sampler weights
  const total = emptyWork();
  for (const w of Object.values(perArm)) add(total, w);
  add(total, shared);
  return { per_arm: perArm, shared, total, assumptions: a };
}

export type TokenCount = WorkCount['tokens'];

export function tokenSum(t: TokenCount): number {
  return t.sampled + t.prefill + t.trained;
}

export function totalTokens(w: WorkCount): number {
  return tokenSum(w.tokens);
}
