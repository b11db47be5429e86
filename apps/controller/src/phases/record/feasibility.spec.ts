import { feasibility } from './feasibility';

const phases = { setup: 30, preflight: 10, pilot: 20, training: 100, evaluation: 60, other: 2 };

describe('feasibility projection', () => {
  it('projects the measured rates onto each configuration and sets them against the budget', () => {
    const f = feasibility({
      phases,
      stepsTrained: 4,
      itemsEvaluated: 3 * 20,
      budget: { maxWallMinutes: 120, gpuHours: 2 },
      configs: [
        { label: 'this run', steps: 4, n_eval: 20, models: 3 },
        { label: 'the pre-registered spec', steps: 40, n_eval: 1319, models: 3 },
      ],
      backend: 'embedded',
    });
    expect(f.measured.total).toBe(222);
    expect(f.measured.seconds_per_step).toBe(25);
    expect(f.measured.seconds_per_eval_item).toBe(1);
    // fixed 62 s + 25 s x 4 + 1 s x 20 x 3 = 222 s
    expect(f.projections[0].wall_minutes).toBeCloseTo(222 / 60, 12);
    // 62 + 25 x 40 + 1 x 1319 x 3 = 5019 s = 83.65 min, within 120
    expect(f.projections[1].wall_minutes).toBeCloseTo(5019 / 60, 12);
    expect(f.projections[1].within_wall_budget).toBe(true);
    expect(f.gpu_hours.projected).toBe(0);
    expect(f.within_budget).toBe(true);
  });

  it('is over budget when the projection exceeds max_wall_minutes, and unknown without training', () => {
    const slow = feasibility({ phases: { ...phases, training: 4000 }, stepsTrained: 4, itemsEvaluated: 60, budget: { maxWallMinutes: 120, gpuHours: 2 }, configs: [{ label: 'x', steps: 40, n_eval: 1319, models: 3 }], backend: 'tinker' });
    expect(slow.projections[0].within_wall_budget).toBe(false);
    expect(slow.gpu_hours.projected).toBeNull();
    expect(slow.within_budget).toBe(false);
    const none = feasibility({ phases, stepsTrained: 0, itemsEvaluated: 0, budget: { maxWallMinutes: 120, gpuHours: 2 }, configs: [{ label: 'x', steps: 40, n_eval: 1319, models: 3 }], backend: 'embedded' });
    expect(none.projections[0].wall_minutes).toBeNull();
    expect(none.within_budget).toBeNull();
  });
});
