// The six activation-gate metrics of the spec's `activation_gate.checks`, by their spec names.

export const GATE_METRIC_NAMES = [
  'executed_group_size_treatment',
  'executed_group_size_baseline',
  'pilot_mean_reward',
  'kernel_effective_neighbors_p10',
  'frac_nonzero_advantage_treatment',
  'baseline_reward_corr',
] as const;

export type GateMetricName = (typeof GATE_METRIC_NAMES)[number];

/** Metrics whose value is the set of values seen (compared with `one_of`), not one number. */
export const SET_VALUED_GATE_METRICS: readonly GateMetricName[] = ['executed_group_size_treatment', 'executed_group_size_baseline'];
