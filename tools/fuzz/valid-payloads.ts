// One valid payload per queue of the catalog, the starting points of the payload mutations. Typed as the
// catalog's payload types, so a schema change that these no longer fit is a compile error here.
import type { QueuePayloads, StepPlan } from '@rx/contracts';
import { fixtureTrainStep } from '@rx/contracts/testing';

const header = { runId: 'fuzz-run.1', arm: 'gs1_kernel', step: 3 } as const;

export function validPayloads(): QueuePayloads {
  const train = fixtureTrainStep({ prompts: 4, groupSize: 2, promptTokens: 5, completionTokens: 3, seed: 7 });
  const plan: StepPlan = train.plan;
  const problems = train.prompts.map((p, i) => ({ promptId: p.promptId, question: `What is ${i} + 1?`, answer: `${i} + 1 = ${i + 1}\n#### ${i + 1}` }));
  const sampledRollouts = train.rollouts.map(({ rolloutId, promptId, tokens, logprobs, stopReason, phi }) => ({ rolloutId, promptId, tokens, logprobs, stopReason, phi }));
  const gradedRollouts = train.rollouts.map((r, i) => ({ ...sampledRollouts[i], reward: r.reward, correct: r.correct, formatOk: r.formatOk }));
  return {
    'step-requests': {
      ...header,
      plan,
      lora: { baseModel: 'rx-embedded/char-lm', rank: 8, seed: 0 },
      initStatePath: 'tinker://fuzz-run.1:train:0/weights/init',
      prompts: problems,
    },
    'sample-requests': { ...header, plan, samplerPath: train.samplerPath, prompts: problems },
    rollouts: {
      ...header,
      plan,
      samplerPath: train.samplerPath,
      prompts: train.prompts.map((p, i) => ({ ...p, answer: problems[i].answer })),
      rollouts: sampledRollouts,
      timings: { prepare: 0.5, sample: 2.25 },
    },
    'graded-rollouts': { ...header, plan, samplerPath: train.samplerPath, prompts: train.prompts, rollouts: gradedRollouts, timings: { sample: 2.25, grade: 0.125 } },
    'train-steps': { ...train, ...header },
    'step-events': {
      ...header,
      kind: 'step-complete',
      outcome: 'applied',
      record: {
        ...header,
        estimator: 'group_mean',
        rollouts: train.rollouts.map((r) => ({
          rolloutId: r.rolloutId,
          promptId: r.promptId,
          phi: r.phi,
          completionTokens: r.tokens.length,
          stopReason: r.stopReason,
          reward: r.reward,
          correct: r.correct,
          formatOk: r.formatOk,
          advantage: r.advantage,
          baseline: r.baseline,
          effectiveNeighbors: r.effectiveNeighbors,
          fallback: r.fallback,
          dropped: r.dropped,
        })),
        datums: train.rollouts.length,
        loss: -0.25,
        optimizerStep: 4,
        learningRate: plan.learningRate,
        gate: train.gate,
        timings: train.timings,
        samplerPath: train.samplerPath,
        committedAt: '2026-08-01T12:00:00.000Z',
      },
    },
    'dead-letters': {
      sourceQueue: 'rollouts',
      sourceJobId: 'fuzz-run.1-gs1_kernel-3-grade',
      reason: 'invalid-payload',
      error: 'rollouts.0.tokens.0: Expected integer, received float',
      issues: [{ path: 'rollouts.0.tokens.0', message: 'Expected integer, received float' }],
      dataPreview: '{"runId":"fuzz-run.1","arm":"gs1_kernel","step":3,',
      receivedAt: '2026-08-01T12:00:01.000Z',
    },
  };
}
