// The only label values the rx metrics take: closed enums (and the spec's arm names), never ids.
import type { ArmName } from '@rx/contracts';
export { QUEUE_NAME_LIST, STAGE_NAMES, type ArmName, type QueueName, type StageName } from '@rx/contracts';

/** The activation gates of the pre-registered spec (activation_gate.checks[].metric), from @rx/gates. */
export { GATE_METRIC_NAMES as GATE_NAMES, type GateMetricName as GateName } from '@rx/gates';

export const GATE_SIDES = ['min', 'max'] as const;
export type GateSide = (typeof GATE_SIDES)[number];

/** PolicyBackend calls, as the Tinker SDK names them. */
export const BACKEND_OPERATIONS = [
  'create_training_client',
  'create_sampling_client',
  'sample',
  'compute_logprobs',
  'sample_with_prompt_logprobs',
  'forward_backward',
  'optim_step',
  'save_weights_for_sampler',
  'save_state',
  'load_state',
  'ping',
] as const;
export type BackendOperation = (typeof BACKEND_OPERATIONS)[number];

export const NEIGHBOR_QUANTILES = ['p10', 'p50', 'p90'] as const;
export type NeighborQuantile = (typeof NEIGHBOR_QUANTILES)[number];

export const SERVICE_NAMES = ['sampler', 'grader', 'advantage', 'trainer', 'controller', 'policy-server'] as const;
export type ServiceName = (typeof SERVICE_NAMES)[number];

export const INTERVAL_BOUNDS = ['lower', 'upper'] as const;
export type IntervalBound = (typeof INTERVAL_BOUNDS)[number];

export const DECISION_OUTCOMES = ['supported', 'inconclusive', 'refuted'] as const;
export type DecisionOutcome = (typeof DECISION_OUTCOMES)[number];

/** the models evaluated: the base model and the spec's arms */
export type ModelName = 'base' | ArmName;

/** how a step's groups (its rollouts of one prompt) split: the cookbook's by_group kinds, and by the correct bit */
export const GROUP_KINDS = ['mixed', 'all_good', 'all_bad', 'all_correct', 'all_wrong'] as const;
export type GroupKind = (typeof GROUP_KINDS)[number];

/**
 * What one attempt of a job ends in: sent (its stage's output enqueued on the next queue), skipped (the work was
 * done already: nothing sent), delivered (the controller took the event: the chain ends there), failed (it threw
 * and is retried after the back-off), dead_lettered (invalid, unrecoverable, or its last attempt failed).
 */
export const JOB_OUTCOMES = ['sent', 'skipped', 'delivered', 'failed', 'dead_lettered'] as const;
export type JobOutcome = (typeof JOB_OUTCOMES)[number];

export const LENGTH_STATS = ['mean', 'max'] as const;
export type LengthStat = (typeof LENGTH_STATS)[number];
