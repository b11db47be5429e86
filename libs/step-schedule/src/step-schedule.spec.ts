import { loadSpecText, baselineArm, treatmentArm } from '@rx/spec';
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { promptsForStep, samplingSeed, stepRequestFor } from './step-schedule';
import { QUEUE_CATALOG } from '@rx/contracts';

const parsed = loadSpecText(readFileSync(path.resolve(__dirname, '../../../specs/embedded.json'), 'utf8'));
if (!parsed.ok) throw new Error(parsed.errors.join('\n'));
const spec = parsed.spec;
const train = Array.from({ length: spec.dataset.n_examples }, (_, i) => ({ id: `p${i}`, question: `q${i}`, answer: `#### ${i}` }));

describe('the step schedule', () => {
  it('draws each arm its consecutive slice of the fixed order: GRPO 8 prompts a step, GS1 64', () => {
    expect(promptsForStep(train, baselineArm(spec), 3).map((p) => p.promptId)).toEqual(['p24', 'p25', 'p26', 'p27', 'p28', 'p29', 'p30', 'p31']);
    const gs1 = promptsForStep(train, treatmentArm(spec), 39);
    expect(gs1).toHaveLength(64);
    expect(gs1[0].promptId).toBe('p2496');
    expect(() => promptsForStep(train, treatmentArm(spec), 40)).toThrow(/only 2560 training prompts/);
  });

  it('gives every step its own seed, far apart, and the same seed to the same step', () => {
    const seeds = Array.from({ length: 40 }, (_, s) => samplingSeed(0, s));
    expect(new Set(seeds).size).toBe(40);
    for (let s = 1; s < 40; s++) expect(seeds[s] - seeds[s - 1]).toBeGreaterThanOrEqual(64);
    expect(samplingSeed(3, 7)).toBe(samplingSeed(3, 7));
  });

  it('builds step requests the catalog accepts, with the arm plan of the spec', () => {
    for (const arm of spec.arms) {
      const req = stepRequestFor({ spec, arm, runId: 'r1', step: 2, train, bandwidth: 1, initStatePath: 'tinker://x/weights/init' });
      expect(QUEUE_CATALOG['step-requests'].schema.safeParse(req).success).toBe(true);
      expect(req.plan.groupSize).toBe(arm.group_size);
      expect(req.plan.learningRate).toBe(arm.lr);
      expect(req.plan.sampling).toEqual({ maxTokens: spec.feasibility.effective_config.max_tokens, temperature: 1, seed: samplingSeed(arm.seed, 2) });
      expect(req.plan.advantage).toEqual(arm.advantage === 'group_mean' ? { estimator: 'group_mean', dropConstantGroups: false } : { estimator: 'kernel_cross_prompt_baseline', bandwidth: 1, windowSize: 256 });
      expect(req.lora).toEqual({ baseModel: spec.base_model, rank: spec.lora_rank, seed: arm.seed });
    }
  });
});
