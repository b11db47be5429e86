import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadSpecText } from './parse-spec';
import { applySpecOverride } from './spec-override';

const loaded = loadSpecText(readFileSync(join(__dirname, 'fixtures', 'small-spec.json'), 'utf8'));
if (!loaded.ok) throw new Error(loaded.errors.join('\n'));
const spec = loaded.spec;

describe('applySpecOverride', () => {
  it('merges nested objects and re-validates', () => {
    const r = applySpecOverride(spec, { steps: 2, eval: { n_examples: 5 }, feasibility: { effective_config: { steps: 2, n_eval: 5 } } });
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    expect(r.spec.steps).toBe(2);
    expect(r.spec.eval).toEqual({ benchmark: 'toy test', metric: 'exact match', n_examples: 5 });
    expect(r.spec.feasibility.effective_config.max_tokens).toBe(16);
    // the input is left alone
    expect(spec.steps).toBe(3);
  });

  it('merges arms by name and gate checks by metric', () => {
    const r = applySpecOverride(spec, {
      batch_size: 4,
      arms: [{ name: 'kern1', groups_per_batch: 4 }, { name: 'gm4', groups_per_batch: 1 }],
      activation_gate: { checks: [{ metric: 'kernel_effective_neighbors_p10', min: 1 }] },
      feasibility: { effective_config: { batch_size: 4 } },
    });
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    expect(r.spec.arms.map((a) => [a.name, a.group_size, a.groups_per_batch])).toEqual([
      ['gm4', 4, 1],
      ['kern1', 1, 4],
    ]);
    expect(r.spec.activation_gate.checks).toHaveLength(4);
    expect(r.spec.activation_gate.checks[3]).toEqual({ metric: 'kernel_effective_neighbors_p10', measures: 'p10 effective neighbours', min: 1 });
  });

  it('returns the path-named errors of an override that breaks the spec', () => {
    const r = applySpecOverride(spec, { batch_size: 16 });
    expect(r).toEqual({
      ok: false,
      errors: [
        'arms[0]: groups_per_batch * group_size = 2 * 4 = 8, not batch_size 16',
        'arms[1]: groups_per_batch * group_size = 8 * 1 = 8, not batch_size 16',
        'feasibility.effective_config.batch_size: 8 differs from batch_size 16',
      ],
    });
  });

  it('replaces an array whose elements do not all match by key', () => {
    const r = applySpecOverride(spec, { arms: [{ name: 'new-arm', lr: 0.001 }] });
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.errors).toContain('arms[0].advantage: required field is missing');
  });
});
