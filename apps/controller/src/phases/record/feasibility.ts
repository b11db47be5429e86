// The feasibility projection: the measured wall time of each phase and the rates behind it (seconds per training
// step with both arms running side by side, seconds per evaluated item), projected onto a configuration (the
// run's own, and the pre-registered one when the run was reduced by an override) and set against the spec's
// budget (max_wall_minutes, gpu_hours).
import type { Feasibility, PhaseSeconds, ProjectionConfig } from '@rx/run-dir';

export interface FeasibilityInput {
  phases: PhaseSeconds;
  stepsTrained: number;
  itemsEvaluated: number;
  budget: { maxWallMinutes: number; gpuHours: number };
  configs: ProjectionConfig[];
  backend: 'embedded' | 'tinker';
}

// wall = setup + preflight + pilot + other + s_step * steps + s_item * n_eval * models (minutes)
export function feasibility(i: FeasibilityInput): Feasibility {
  const p = i.phases;
  const total = p.setup + p.preflight + p.pilot + p.training + p.evaluation + p.other;
  const perStep = i.stepsTrained > 0 ? p.training / i.stepsTrained : null;
  const perItem = i.itemsEvaluated > 0 ? p.evaluation / i.itemsEvaluated : null;
  const fixed = p.setup + p.preflight + p.pilot + p.other;
  const projections = i.configs.map((c) => {
    const wall = perStep === null || perItem === null ? null : (fixed + perStep * c.steps + perItem * c.n_eval * c.models) / 60;
    return { ...c, wall_minutes: wall, within_wall_budget: wall === null ? null : wall <= i.budget.maxWallMinutes };
  });
  const gpu =
    i.backend === 'embedded'
      ? { projected: 0, basis: 'the embedded backend runs on CPU: no GPU hours' }
      : { projected: null, basis: 'Tinker runs the model on remote GPUs; the client does not see their hours (wall time is the bound checked here)' };
  const wallOk = projections.length > 0 ? projections[projections.length - 1].within_wall_budget : null;
  const gpuOk = gpu.projected === null ? null : gpu.projected <= i.budget.gpuHours;
  return {
    measured: { ...p, total, steps_trained: i.stepsTrained, seconds_per_step: perStep, items_evaluated: i.itemsEvaluated, seconds_per_eval_item: perItem },
    budget: { max_wall_minutes: i.budget.maxWallMinutes, gpu_hours: i.budget.gpuHours },
    projections,
    gpu_hours: gpu,
    within_budget: wallOk === null ? null : gpuOk === null ? wallOk : wallOk && gpuOk,
  };
}
