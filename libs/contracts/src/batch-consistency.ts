// Cross-field checks every rollout batch passes: a complete batch of groupSize rollouts per prompt, ids unique,
// each rollout's prompt present, one logprob per completion token.
import type { RefinementCtx } from 'zod';
import { quoted } from './issue-text';

interface BatchShape {
  plan: { groupSize: number };
  prompts: ReadonlyArray<{ promptId: string }>;
  rollouts: ReadonlyArray<{ rolloutId: string; promptId: string; tokens: readonly number[]; logprobs: readonly number[] }>;
}

export function checkBatchConsistency(batch: BatchShape, ctx: RefinementCtx): void {
  const prompts = new Set<string>();
  batch.prompts.forEach((p, i) => {
    if (prompts.has(p.promptId)) ctx.addIssue({ code: 'custom', path: ['prompts', i, 'promptId'], message: `duplicate prompt ${quoted(p.promptId)}` });
    prompts.add(p.promptId);
  });
  const expected = batch.prompts.length * batch.plan.groupSize;
  if (batch.rollouts.length !== expected) {
    ctx.addIssue({
      code: 'custom',
      path: ['rollouts'],
      message: `expected ${expected} rollouts (${batch.prompts.length} prompts x group size ${batch.plan.groupSize}), got ${batch.rollouts.length}`,
    });
  }
  const ids = new Set<string>();
  const perPrompt = new Map<string, number>();
  batch.rollouts.forEach((r, i) => {
    if (ids.has(r.rolloutId)) ctx.addIssue({ code: 'custom', path: ['rollouts', i, 'rolloutId'], message: `duplicate rollout ${quoted(r.rolloutId)}` });
    ids.add(r.rolloutId);
    if (!prompts.has(r.promptId)) ctx.addIssue({ code: 'custom', path: ['rollouts', i, 'promptId'], message: `unknown prompt ${quoted(r.promptId)}` });
    perPrompt.set(r.promptId, (perPrompt.get(r.promptId) ?? 0) + 1);
    if (r.tokens.length !== r.logprobs.length) {
      ctx.addIssue({
        code: 'custom',
        path: ['rollouts', i, 'logprobs'],
        message: `${r.tokens.length} tokens but ${r.logprobs.length} logprobs`,
      });
    }
  });
  for (const [promptId, n] of perPrompt) {
    if (n !== batch.plan.groupSize && prompts.has(promptId)) {
      ctx.addIssue({ code: 'custom', path: ['rollouts'], message: `prompt ${quoted(promptId)} has ${n} rollouts, group size is ${batch.plan.groupSize}` });
    }
  }
}
