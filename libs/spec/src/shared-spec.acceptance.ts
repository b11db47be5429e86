// The published spec (../shared/specs/gs1-vs-grpo.json) parses unchanged, and specs/embedded.json is that spec
// with only the embedded model, data and lengths swapped in.
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { evaluateGates } from '@rx/gates';
import { loadSpecText } from './parse-spec';
import { baselineArm, budget, correctnessPreflight, decisionRule, gateChecks, kernelSettings, preflightTolerances, samplingSettings, treatmentArm } from './spec-accessors';

const root = resolve(__dirname, '..', '..', '..');
const sharedDir = process.env.RX_SHARED_DIR ?? resolve(root, '..', 'shared');
const sharedText = readFileSync(join(sharedDir, 'specs', 'gs1-vs-grpo.json'), 'utf8');
const embeddedText = readFileSync(join(root, 'specs', 'embedded.json'), 'utf8');

describe('the shared gs1-vs-grpo spec', () => {
  const r = loadSpecText(sharedText);

  it('is shipped unchanged as specs/gs1-vs-grpo.json', () => {
    expect(readFileSync(join(root, 'specs', 'gs1-vs-grpo.json'), 'utf8')).toBe(sharedText);
  });

  it('parses unchanged (the parsed spec equals the file)', () => {
    expect(r.ok ? [] : r.errors).toEqual([]);
    if (r.ok) expect(r.spec).toEqual(JSON.parse(sharedText));
  });

  it('reads as the experiment it describes', () => {
    if (!r.ok) throw new Error('spec did not parse');
    const spec = r.spec;
    expect(treatmentArm(spec)).toMatchObject({ name: 'gs1_kernel', group_size: 1, groups_per_batch: 64 });
    expect(baselineArm(spec)).toMatchObject({ name: 'grpo_gs8', group_size: 8, groups_per_batch: 8 });
    expect(decisionRule(spec)).toMatchObject({ alpha: 0.05, margin: -0.03, bounds: [0, 1], weights: { treatment: 1, baseline: -1 } });
    expect(gateChecks(spec).map((g) => g.metric)).toEqual([
      'executed_group_size_treatment',
      'executed_group_size_baseline',
      'pilot_mean_reward',
      'kernel_effective_neighbors_p10',
      'frac_nonzero_advantage_treatment',
      'baseline_reward_corr',
    ]);
    expect(preflightTolerances(spec)[0].tolerances.baseline_gradient).toEqual({ atol: 1e-5, min_cosine: 0.99999, rtol: 1e-4 });
    expect(correctnessPreflight(spec).resolved).toBe(false);
    expect(budget(spec)).toEqual({ gpuHours: 2, maxWallMinutes: 120, maxTokens: null, maxUsd: null, steps: 40, rolloutsPerStep: 64 });
    expect(samplingSettings(spec)).toEqual({ maxTokens: 512, temperature: 1 });
    expect(kernelSettings(spec).bandwidth).toBe(0.5);
    expect(evaluateGates(spec, {
      executed_group_size_treatment: [1],
      executed_group_size_baseline: [8],
      pilot_mean_reward: 0.5,
      kernel_effective_neighbors_p10: 8,
      frac_nonzero_advantage_treatment: 0.5,
      baseline_reward_corr: 0.1,
      missing: {},
      counts: { treatmentRollouts: 128, baselineRollouts: 128, pilotSteps: [0, 1], corrPairs: 64, heldoutPrompts: 64, heldoutUnmatched: 0, heldoutSamplesPerPrompt: [8] },
    }).pass).toBe(true);
  });
});

describe('specs/embedded.json', () => {
  it('parses', () => {
    const r = loadSpecText(embeddedText);
    expect(r.ok ? [] : r.errors).toEqual([]);
  });

  it('differs from the shared spec only in model, data, eval benchmark, lengths and its recorded revision', () => {
    const diffs: string[] = [];
    const walk = (a: unknown, b: unknown, path: string) => {
      if (typeof a === 'object' && a !== null && typeof b === 'object' && b !== null) {
        const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
        for (const k of keys) walk((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k], path === '' ? k : `${path}.${k}`);
      } else if (a !== b) diffs.push(path);
    };
    const shared = JSON.parse(sharedText);
    const embedded = JSON.parse(embeddedText);
    walk(shared, embedded, '');
    expect(diffs.sort()).toEqual(
      [
        'base_model',
        'command', // max_tokens=512 -> 64 and learning_rate=4e-5 -> the revised lr in the prose
        'dataset.hf_path',
        'dataset.name',
        'dataset.split',
        'eval.benchmark',
        'feasibility.effective_config.base_model',
        'feasibility.effective_config.max_seq_len',
        'feasibility.effective_config.max_tokens',
        'max_seq_len',
        'method', // max_tokens=512 -> 64 in the prose
        'preflight.probe', // learning_rate=4e-5 -> the revised lr in the prose
        // the recorded revision: the learning rate of both arms
        'optimizer.lr',
        'arms.0.lr',
        'arms.1.lr',
        'restoration_preflight.groups.0.arms.0.optimizer_config.lr',
        'restoration_preflight.groups.0.arms.1.optimizer_config.lr',
        'revision',
      ].sort(),
    );
    const lr = embedded.optimizer.lr as number;
    // the published spec keeps its lr (and so does the Tinker path, which runs it)
    expect(shared.optimizer.lr).toBe(4e-5);
    expect(lr).not.toBe(4e-5);
    const lrWritten = String(embedded.command.match(/learning_rate=([0-9.e-]+)/)?.[1]);
    expect(Number(lrWritten)).toBe(lr);
    expect(embedded.command).toBe(shared.command.replace('max_tokens=512', 'max_tokens=64').replace('learning_rate=4e-5', `learning_rate=${lrWritten}`));
    expect(embedded.method).toBe(shared.method.replace('max_tokens=512', 'max_tokens=64'));
    expect(embedded.preflight.probe).toBe(shared.preflight.probe.replace('learning_rate=4e-5', `learning_rate=${lrWritten}`));
    expect(embedded.feasibility.effective_config.max_tokens).toBe(64);
    expect(embedded.max_seq_len).toBe(128);
    // the revision names each revised field with the value it had before (the published lr; the embedded max_tokens 32)
    const from = Object.fromEntries(embedded.revision.changes.map((c: { path: string; from: unknown }) => [c.path, c.from]));
    expect(from).toEqual({
      'optimizer.lr': 4e-5,
      'arms.grpo_gs8.lr': 4e-5,
      'arms.gs1_kernel.lr': 4e-5,
      'restoration_preflight.groups.0.arms.grpo_gs8.optimizer_config.lr': 4e-5,
      'restoration_preflight.groups.0.arms.gs1_kernel.optimizer_config.lr': 4e-5,
      'feasibility.effective_config.max_tokens': 32,
    });
  });
});
