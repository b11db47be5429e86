import { intactRecord } from '@rx/exchange-record/testing';
import { feasibilityValidation, projectedWallSeconds } from './feasibility-validation';

const only = (r = intactRecord()) => feasibilityValidation(r.record, r.evidence());

describe('feasibility', () => {
  it('passes on the intact record, whose projection fits the budget', () => {
    expect(only()).toEqual({ validator: 'feasibility', status: 'passed', issues: [] });
    const m = intactRecord().record.feasibility.measurements!;
    // 4 / 1 * 1 + 14 / 3 * 80 + 57 / 120 * 120 + 600 = 1034.33 s
    expect(projectedWallSeconds(m, 600)).toBeCloseTo(4 + (14 / 3) * 80 + 57 + 600, 12);
  });

  it('requires re-projection when a setting changed or was not recorded', () => {
    const r = intactRecord();
    r.record.feasibility.effective_config = { ...r.record.feasibility.effective_config, steps: 4 };
    delete (r.record.feasibility.config as Record<string, unknown>).lora_rank;
    expect(only(r)).toEqual({ validator: 'feasibility', status: 'unknown', issues: ['Re-projection required: lora_rank changed or was not recorded', 'Re-projection required: steps changed or was not recorded'] });
  });

  it('is unknown without pilot evidence, a representative timing or a positive recovery reserve', () => {
    const r = intactRecord();
    r.record.feasibility.source = null;
    r.record.feasibility.measurements!.training.units = 0;
    r.record.feasibility.recovery = { seconds: 0 };
    expect(only(r).issues).toEqual(['Pilot evidence source not recorded', 'Representative training timing not recorded', 'Positive recovery reserve not recorded']);
    const gone = intactRecord();
    delete gone.texts['pilot.json'];
    expect(only(gone).issues).toEqual(['Pilot evidence pilot.json is not in the run directory']);
  });

  it('is invalid when the projection exceeds max_wall_minutes', () => {
    const r = intactRecord();
    r.record.feasibility.measurements!.training.seconds = 300; // 300 / 3 * 80 = 8000 s alone
    expect(only(r)).toEqual({ validator: 'feasibility', status: 'invalid', issues: [expect.stringMatching(/^Projected wall time 144\.\d min exceeds the budget of 120 min$/)] });
  });
});
