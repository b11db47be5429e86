// The feasibility section of the exchange record, from what the run measured: the configuration the run was
// projected for (its effective config) and the one its measurements were taken at (what actually ran: steps
// trained, items evaluated, arms trained), the wall seconds per phase with their units (setup with the preflight,
// pilot and record as one fixed unit; training per step of both arms side by side; evaluation per item), the
// recovery reserve, and the files holding the pilot evidence.
import type { ExchangeRecord } from '@rx/exchange-record';
import type { PhaseSeconds } from '@rx/run-dir';

export interface FeasibilityInput {
  /** the ten settings as the run was configured (effective-config.json) */
  effective: Record<string, unknown>;
  stepsTrained: number;
  armsTrained: string[];
  /** items evaluated per model (the same for every model when the evaluation finished) */
  itemsPerModel: number | null;
  models: number;
  phases: PhaseSeconds;
  pilotSources: string[];
}

// recovery reserve = one interruption resumed: the stack set up again, the step in doubt redone and one model's
// evaluation redone (setup + s_step + s_item * n_eval), in seconds
export function recoveryReserveSeconds(setupSeconds: number, secondsPerStep: number, secondsPerItem: number, nEval: number): number {
  return setupSeconds + secondsPerStep + secondsPerItem * nEval;
}

export function exchangeFeasibility(i: FeasibilityInput): ExchangeRecord['feasibility'] {
  const p = i.phases;
  const steps = Number(i.effective.steps);
  const nEval = Number(i.effective.n_eval);
  const itemsEvaluated = (i.itemsPerModel ?? 0) * i.models;
  const fixed = p.setup + p.preflight + p.pilot + p.other;
  const measured = {
    setup: { seconds: fixed, units: 1, planned_units: 1, samples: null, gpu_count: null, allocation_source: null },
    training: { seconds: p.training, units: i.stepsTrained, planned_units: steps, samples: null, gpu_count: null, allocation_source: null },
    evaluation: { seconds: p.evaluation, units: itemsEvaluated, planned_units: nEval * i.models, samples: itemsEvaluated, gpu_count: null, allocation_source: null },
  };
  const perStep = i.stepsTrained > 0 ? p.training / i.stepsTrained : 0;
  const perItem = itemsEvaluated > 0 ? p.evaluation / itemsEvaluated : 0;
  return {
    config: { ...i.effective, steps: i.stepsTrained, arms: i.armsTrained, n_eval: i.itemsPerModel },
    effective_config: i.effective,
    primary_endpoint: null,
    source: i.pilotSources,
    measurements: measured,
    recovery: { seconds: recoveryReserveSeconds(p.setup, perStep, perItem, nEval), basis: 'one interruption resumed: setup again + the step in doubt + one model evaluated again' },
    generation: null,
  };
}
