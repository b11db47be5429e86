// Preflight (c), the spec's probe: per arm, a training client (adam, the spec's rank and seed), one sampled
// example carrying that arm's computed advantage (sampled, graded and scored by the loop's own stage functions),
// one forward_backward(importance_sampling) and one optim_step; both must succeed and the loss be finite.
import type { PolicyBackend, Renderer, TrainingClient } from '@rx/backend';
import type { Problem } from '@rx/contracts';
import { gradeCompletion } from '@rx/grading';
import { adamParamsFor, computeAdvantages, datumsOf, gradeBatch, InMemoryRolloutWindowStore, sampleBatch } from '@rx/pipeline';
import type { ArmSpec, ExperimentSpec } from '@rx/spec';
import { loraFor, stepPlanFor } from '@rx/step-schedule';
import { unloadQuietly } from '../unload-model';

export interface ProbeResult {
  arm: string;
  sampler_path: string;
  /** prompts sampled to compute the arm's advantage (group mean: 1 prompt x 8; kernel: 8 prompts x 1) */
  prompts_sampled: number;
  example: { prompt_id: string; reward: number; advantage: number; completion_tokens: number };
  loss: number;
  optimizer_step: number;
  finite: boolean;
  pass: boolean;
  error: string | null;
}

export async function runProbe(args: {
  spec: ExperimentSpec;
  arm: ArmSpec;
  backend: PolicyBackend;
  renderer: Renderer;
  train: readonly { id: string; question: string; answer: string }[];
  runId: string;
  bandwidth: number;
  concurrency: number;
  /** a warning line (a refused unload_model) */
  warn?: (line: string) => void;
}): Promise<ProbeResult> {
  const { spec, arm, backend, renderer } = args;
  const nPrompts = arm.group_size > 1 ? 1 : 8;
  const prompts: Problem[] = args.train.slice(0, nPrompts).map((p) => ({ promptId: p.id, question: p.question, answer: p.answer }));
  const plan = stepPlanFor(spec, arm, 0, args.bandwidth);
  let samplerPath = '';
  let client: TrainingClient | undefined;
  try {
    client = await backend.createLoraTrainingClient(loraFor(spec, arm));
    samplerPath = await client.saveWeightsForSampler(`${args.runId}-probe-${arm.name}`);
    const header = { runId: `${args.runId}.probe`, arm: arm.name, step: 0 };
    const sampled = await sampleBatch({ ...header, plan, samplerPath, prompts }, { backend, renderer, concurrency: args.concurrency });
    const graded = gradeBatch(sampled, { renderer, grade: gradeCompletion });
    const scored = await computeAdvantages(graded, { windows: new InMemoryRolloutWindowStore() });
    // one example: the first rollout, with the advantage the arm's estimator gave it
    const one = { ...scored, rollouts: [{ ...scored.rollouts[0], dropped: false }] };
    const datums = datumsOf(one);
    const fb = await client.forwardBackward(datums, 'importance_sampling');
    const optim = await client.optimStep(adamParamsFor(arm.lr));
    const finite = Number.isFinite(fb.loss);
    const r = one.rollouts[0];
    return {
      arm: arm.name,
      sampler_path: samplerPath,
      prompts_sampled: nPrompts,
      example: { prompt_id: r.promptId, reward: r.reward, advantage: r.advantage, completion_tokens: r.tokens.length },
      loss: fb.loss,
      optimizer_step: optim.step,
      finite,
      pass: finite,
      error: finite ? null : `loss is not finite (${fb.loss})`,
    };
  } catch (err) {
    return {
      arm: arm.name,
      sampler_path: samplerPath,
      prompts_sampled: nPrompts,
      example: { prompt_id: prompts[0]?.promptId ?? '', reward: NaN, advantage: NaN, completion_tokens: 0 },
      loss: NaN,
      optimizer_step: -1,
      finite: false,
      pass: false,
      error: (err as Error).message,
    };
  } finally {
    if (client) await unloadQuietly(args.warn ?? (() => undefined), client, `the ${arm.name} probe`);
  }
}
