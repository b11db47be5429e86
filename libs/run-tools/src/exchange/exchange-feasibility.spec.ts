import { feasibilityValidation, type ExchangeRecord } from '@rx/exchange-record';
import { intactExpectedRun as expectedRun, intactRecord } from '@rx/exchange-record/testing';
import { exchangeFeasibility, recoveryReserveSeconds } from './exchange-feasibility';

const phases = { setup: 4, preflight: 1, pilot: 14, training: 120, evaluation: 60, other: 1 };
const effective = { ...expectedRun().effective_config };

describe('the feasibility section from what a run measured', () => {
  it('takes the units from the run and reserves one resumed interruption', () => {
    const f = exchangeFeasibility({ effective, stepsTrained: 40, armsTrained: ['grpo_gs8', 'gs1_kernel'], itemsPerModel: 40, models: 3, phases, pilotSources: ['pilot.json'] });
    expect(f.measurements).toMatchObject({
      setup: { seconds: 20, units: 1, planned_units: 1 },
      training: { seconds: 120, units: 40, planned_units: 40 },
      evaluation: { seconds: 60, units: 120, planned_units: 120 },
    });
    // setup 4 + 120 / 40 per step + 60 / 120 per item x 40 items = 27 s
    expect(f.recovery?.seconds).toBe(recoveryReserveSeconds(4, 3, 0.5, 40));
    expect(f.recovery?.seconds).toBe(27);
    expect(f.config).toEqual(effective);
  });

  it('records what actually ran, so a run stopped short needs re-projection', () => {
    const f = exchangeFeasibility({ effective, stepsTrained: 12, armsTrained: ['grpo_gs8', 'gs1_kernel'], itemsPerModel: 40, models: 3, phases, pilotSources: ['pilot.json'] });
    const r = intactRecord();
    const record: ExchangeRecord = { ...r.record, feasibility: f };
    expect(feasibilityValidation(record, r.evidence()).issues).toEqual(['Re-projection required: steps changed or was not recorded']);
  });
});
