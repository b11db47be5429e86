import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { evaluateGates, type GateMetrics } from '@rx/gates';
import { pairedHoeffding } from '@rx/stats';
import type { ExperimentSpec } from './experiment-spec.schema';
import { loadSpecText } from './parse-spec';
import {
  armRole,
  baselineArm,
  budget,
  correctnessPreflight,
  decisionRule,
  evalSettings,
  gateChecks,
  kernelSettings,
  optimizerSettings,
  pilotSettings,
  preflightTolerances,
  samplingSettings,
  treatmentArm,
} from './spec-accessors';

function load(path: string): ExperimentSpec {
  const r = loadSpecText(readFileSync(path, 'utf8'));
  if (!r.ok) throw new Error(r.errors.join('\n'));
  return r.spec;
}

const spec = load(join(__dirname, 'fixtures', 'small-spec.json'));

describe('spec accessors (fixture)', () => {
  it('finds the treatment arm by its kernel advantage, whatever its position', () => {
    expect(treatmentArm(spec)).toEqual({ name: 'kern1', advantage: 'kernel_cross_prompt_baseline', group_size: 1, groups_per_batch: 8, lr: 0.001, seed: 7 });
    expect(baselineArm(spec).name).toBe('gm4');
    const swapped = { ...spec, arms: [spec.arms[1], spec.arms[0]] };
    expect(treatmentArm(swapped).name).toBe('kern1');
    expect(armRole(spec, 'gm4')).toBe('baseline');
    expect(armRole(spec, 'kern1')).toBe('treatment');
    expect(() => armRole(spec, 'nope')).toThrow(/no arm named 'nope'/);
  });

  it('gives the gate checks with numeric one_of', () => {
    expect(gateChecks(spec)).toEqual([
      { metric: 'executed_group_size_treatment', measures: 'rollouts per prompt, treatment', oneOf: [1] },
      { metric: 'executed_group_size_baseline', measures: 'rollouts per prompt, baseline', oneOf: [4] },
      { metric: 'pilot_mean_reward', measures: 'pilot reward', min: 0.2, max: 0.8 },
      { metric: 'kernel_effective_neighbors_p10', measures: 'p10 effective neighbours', min: 3 },
    ]);
  });

  it('gives the preflight tolerances and whether the preflight is resolved', () => {
    expect(preflightTolerances(spec)).toEqual([
      {
        pathId: 'toy_path',
        kind: 'loss',
        baselineRevision: 'abc123',
        referenceRevision: 'def456',
        tolerances: {
          baseline_loss: { atol: 1e-7, rtol: 1e-6 },
          baseline_gradient: { atol: 1e-6, rtol: 1e-5, min_cosine: 0.999 },
          reference_loss: { atol: 2e-7, rtol: 2e-6 },
          reference_gradient: { atol: 2e-6, rtol: 2e-5, min_cosine: 0.998 },
        },
      },
    ]);
    expect(correctnessPreflight(spec)).toEqual({ required: false, status: 'passed', resolved: true, unresolved: [] });
    const open = { ...spec, correctness_preflight: { ...spec.correctness_preflight, paths: [{ ...spec.correctness_preflight.paths[0], reference_revision: 'UNRESOLVED: pin it' }] } };
    expect(correctnessPreflight(open)).toMatchObject({ resolved: false, unresolved: ['correctness_preflight.paths[0].reference_revision'] });
  });

  it('gives the primary decision criterion in the shape pairedHoeffding takes', () => {
    const rule = decisionRule(spec);
    expect(rule).toEqual({ method: 'paired_hoeffding', bound: 'hoeffding', orderSeed: 0, alpha: 0.1, criterionId: 'primary', metric: 'accuracy', bounds: [0, 1], margin: -0.1, weights: { treatment: 1, baseline: -1 } });
    expect(pairedHoeffding([1, 1], [0, 1], rule).halfwidth).toBe(2 * Math.sqrt(Math.log(10) / 4));
  });

  it('gives budget, sampling, eval, kernel, pilot and optimizer settings', () => {
    expect(budget(spec)).toEqual({ gpuHours: 0.25, maxWallMinutes: 5, maxTokens: null, maxUsd: null, steps: 3, rolloutsPerStep: 8 });
    expect(samplingSettings(spec)).toEqual({ maxTokens: 16, temperature: 1 });
    expect(evalSettings(spec)).toEqual({ benchmark: 'toy test', nExamples: 12, maxTokens: 16, temperature: 0 });
    expect(kernelSettings(spec)).toEqual({ bandwidth: 0.5, windowSize: 256, calibrationBandwidths: [0.5, 1.0] });
    expect(pilotSettings(spec)).toEqual({ steps: 2, maxWallMinutes: 10, heldoutPrompts: 64, heldoutSamplesPerPrompt: 8 });
    expect(optimizerSettings(spec, 'kern1')).toEqual({ name: 'adam', lr: 0.001, adam: null });
  });

  it('is accepted by evaluateGates as it is', () => {
    const metrics: GateMetrics = {
      executed_group_size_treatment: [1],
      executed_group_size_baseline: [4],
      pilot_mean_reward: 0.5,
      kernel_effective_neighbors_p10: 2,
      frac_nonzero_advantage_treatment: null,
      baseline_reward_corr: null,
      missing: {},
      counts: { treatmentRollouts: 16, baselineRollouts: 16, pilotSteps: [0, 1], corrPairs: 0, heldoutPrompts: 0, heldoutUnmatched: 0, heldoutSamplesPerPrompt: [] },
    };
    const report = evaluateGates(spec, metrics);
    expect(report.failed).toEqual(['kernel_effective_neighbors_p10']);
  });
});

describe('specs/embedded.json', () => {
  const embedded = load(join(__dirname, '..', '..', '..', 'specs', 'embedded.json'));

  it('parses and describes the embedded run', () => {
    expect(embedded.base_model).toBe('rx-embedded/char-lm');
    expect(embedded.dataset).toEqual({ name: 'arith', hf_path: 'rx/arith', n_examples: 2560, split: 'train' });
    expect(evalSettings(embedded)).toEqual({ benchmark: 'arith test', nExamples: 1319, maxTokens: 64, temperature: 0 });
    expect(samplingSettings(embedded)).toEqual({ maxTokens: 64, temperature: 1 });
    expect(embedded.max_seq_len).toBe(128);
    expect(treatmentArm(embedded).name).toBe('gs1_kernel');
    expect(optimizerSettings(embedded, 'grpo_gs8')).toEqual({ name: 'adam', lr: 5e-4, adam: { beta1: 0.9, beta2: 0.95, eps: 1e-8 } });
  });
});
