// Step requests of the embedded experiment's two arms (specs/embedded.json): 64 rollouts a step, max_tokens 32,
// temperature 1, lr 4e-5, LoRA rank 32 seed 0; grpo_gs8 takes 8 arith train prompts x 8 samples with group-mean
// advantages, gs1_kernel 64 prompts x 1 with the kernel baseline (bandwidth 0.5, window 256). Step s of an arm
// draws prompts [64 s, 64 s + n) of the seed-0 arith train split.
import type { Problem, StepRequest } from '@rx/contracts';
import { arithDataset } from '@rx/datasets';
import { testStepRequest, type TestArm } from '@rx/pipeline/testing';

export const ARMS: readonly TestArm[] = ['grpo_gs8', 'gs1_kernel'];
export const MAX_TOKENS = 32;

let train: Problem[] | undefined;

function trainPrompts(): Problem[] {
  train ??= arithDataset({ split: 'train', seed: 0 }).map((p) => ({ promptId: p.id, question: p.question, answer: p.answer }));
  return train;
}

export function embeddedStepRequest(runId: string, arm: TestArm, step: number): StepRequest {
  const base = testStepRequest(runId, arm, step, { maxTokens: MAX_TOKENS });
  const n = base.prompts.length;
  const all = trainPrompts();
  const prompts = Array.from({ length: n }, (_, k) => all[(64 * step + k) % all.length]);
  return { ...base, prompts };
}
