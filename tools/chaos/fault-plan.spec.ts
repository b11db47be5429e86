import { FAULT_STAGES, FAULT_TARGETS, planFaults, seededRandom, STAGES_OF } from './fault-plan';

const arms = ['grpo_gs8', 'gs1_kernel'];

describe('planFaults', () => {
  it('is a pure function of the seed', () => {
    const a = planFaults({ seed: 42, runs: 3, steps: 3, arms });
    expect(planFaults({ seed: 42, runs: 3, steps: 3, arms })).toEqual(a);
    const others = [1, 2, 3, 4, 5].map((seed) => JSON.stringify(planFaults({ seed, runs: 3, steps: 3, arms })));
    expect(new Set(others).size).toBe(5);
  });

  it.each([1, 2, 3, 10])('hits every target at least once over %i run(s), Redis exactly once', (runs) => {
    for (const seed of [0, 7, 123456]) {
      const plans = planFaults({ seed, runs, steps: 3, arms, extraPerRun: 2 });
      expect(plans.map((p) => p.run)).toEqual(Array.from({ length: runs }, (_, i) => i + 1));
      const targets = plans.flatMap((p) => p.faults.map((f) => f.target));
      for (const t of FAULT_TARGETS) expect(targets).toContain(t);
      expect(targets.filter((t) => t === 'redis')).toHaveLength(1);
      expect(targets).toHaveLength(FAULT_TARGETS.length + 2 * runs);
    }
  });

  it('lands each fault in a stage of its target, a step of the run, within the delay bounds, in step order', () => {
    for (let seed = 0; seed < 50; seed++) {
      for (const plan of planFaults({ seed, runs: 2, steps: 3, arms, maxDelayMs: 150 })) {
        for (const f of plan.faults) {
          expect(STAGES_OF[f.target]).toContain(f.stage);
          expect(arms).toContain(f.arm);
          expect(f.step).toBeGreaterThanOrEqual(0);
          expect(f.step).toBeLessThan(3);
          expect(f.delayMs).toBeGreaterThanOrEqual(0);
          expect(f.delayMs).toBeLessThanOrEqual(f.stage === 'grade' || f.stage === 'advantage' ? 5 : 150);
        }
        const keys = plan.faults.map((f) => f.step * 10 + FAULT_STAGES.indexOf(f.stage));
        expect(keys).toEqual([...keys].sort((x, y) => x - y));
      }
    }
  });

  it('kills the trainer mid-train and, like the policy server, after step 0 (the arm rebuilt from a committed state)', () => {
    for (let seed = 0; seed < 50; seed++) {
      const faults = planFaults({ seed, runs: 3, steps: 3, arms, extraPerRun: 0 }).flatMap((p) => p.faults);
      const trainer = faults.filter((f) => f.target === 'trainer');
      const policy = faults.filter((f) => f.target === 'policy-server');
      expect(trainer).toHaveLength(1);
      expect(trainer[0]).toMatchObject({ stage: 'train' });
      expect(trainer[0].step).toBeGreaterThanOrEqual(1);
      expect(policy[0].step).toBeGreaterThanOrEqual(1);
    }
    // one step: step 0 is all there is
    expect(planFaults({ seed: 1, runs: 1, steps: 1, arms }).flatMap((p) => p.faults).every((f) => f.step === 0)).toBe(true);
  });

  it('refuses a plan with no runs, no steps or no arms', () => {
    expect(() => planFaults({ seed: 1, runs: 0, steps: 2, arms })).toThrow('runs must be a positive integer, got 0');
    expect(() => planFaults({ seed: 1, runs: 1, steps: 0, arms })).toThrow('steps must be a positive integer, got 0');
    expect(() => planFaults({ seed: 1, runs: 1, steps: 2, arms: [] })).toThrow('at least one arm');
  });
});

describe('seededRandom', () => {
  it('repeats for a seed and stays in [0, 1)', () => {
    const a = seededRandom(9);
    const b = seededRandom(9);
    const xs = Array.from({ length: 1000 }, () => a());
    expect(Array.from({ length: 1000 }, () => b())).toEqual(xs);
    expect(Math.min(...xs)).toBeGreaterThanOrEqual(0);
    expect(Math.max(...xs)).toBeLessThan(1);
    const mean = xs.reduce((s, x) => s + x, 0) / xs.length;
    expect(Math.abs(mean - 0.5)).toBeLessThan(0.05);
  });
});
