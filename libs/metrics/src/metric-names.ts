// Every rx metric name, once: rx_<area>_<thing>_<unit>, counters end in _total (Prometheus naming conventions).
// Dashboards and alerts import these; a renamed metric is a new name here, never an edit in a panel.

export const METRIC_NAMES = Object.freeze({
  /** gauge {run, arm, gate}: a gate's measured value */
  gateValue: 'rx_gate_value',
  /** gauge {run, arm, gate}: 1 if the gate passes, 0 if not */
  gatePass: 'rx_gate_pass',
  /** gauge {gate, side}: the gate's bound from the spec (side min|max) */
  gateBound: 'rx_gate_bound',
  /** gauge {gate, index}: the values a one_of gate allows (index: position in the spec's list) */
  gateAllowedValue: 'rx_gate_allowed_value',
  /** gauge {arm}: index of the last step recorded (read with the rx_step_* gauges, so a scrape names its step) */
  stepIndex: 'rx_step_index',
  /** gauge {arm, version}: the cookbook's optim/kl_sample_train_v1|v2 of the last step (sampler vs learner) */
  stepKlSampleTrain: 'rx_step_kl_sample_train',
  /** gauge {arm}: the cookbook's optim/entropy of the last step (minus the mean sampling logprob) */
  stepEntropy: 'rx_step_entropy',
  /** gauge {model}: greedy accuracy on the evaluation items (base and each arm) */
  outcomeAccuracyRatio: 'rx_outcome_accuracy_ratio',
  /** gauge: the paired effect (treatment - baseline accuracy) of the decision rule */
  outcomeEffect: 'rx_outcome_effect',
  /** gauge {bound}: the decision's interval (bound lower|upper) */
  outcomeInterval: 'rx_outcome_interval',
  /** gauge: the pre-registered noninferiority margin */
  outcomeMargin: 'rx_outcome_margin',
  /** gauge {outcome}: 1 for the decision reached (supported|inconclusive|refuted), 0 for the others */
  outcomeDecision: 'rx_outcome_decision',
  /** gauge {phase}: 1 for the phase the run is in, 0 for the others */
  runPhase: 'rx_run_phase',
  /** gauge {arm}: mean training reward of the last step */
  stepRewardMean: 'rx_step_reward_mean',
  /** gauge {arm}: fraction of the last step's rollouts with |advantage| > 1e-6 */
  stepNonzeroAdvantageRatio: 'rx_step_nonzero_advantage_ratio',
  /** gauge {arm, quantile}: effective-neighbour quantiles (p10, p50, p90) of the last step */
  stepEffectiveNeighbors: 'rx_step_effective_neighbors',
  /** gauge {arm}: metrics.jsonl's rx/frac_reward_zero_std of the last step (zero-spread groups; GS1: baseline = reward) */
  stepRewardZeroStdRatio: 'rx_step_reward_zero_std_ratio',
  /** gauge {arm, group}: share of the last step's groups that are mixed, all_good, all_bad (the cookbook's by_group), all_correct, all_wrong */
  stepGroupRatio: 'rx_step_group_ratio',
  /** gauge {arm}: share of the last step's completions cut by a length limit, max_tokens or the context (rx/completions/clipped_ratio) */
  stepClippedCompletionsRatio: 'rx_step_clipped_completions_ratio',
  /** gauge {arm, stat}: completion length of the last step in tokens (stat mean|max) */
  stepCompletionLengthTokens: 'rx_step_completion_length_tokens',
  /** gauge {arm}: population standard deviation of the last step's rewards */
  stepRewardStd: 'rx_step_reward_std',
  /** gauge {arm}: forward_backward loss of the last step */
  stepLoss: 'rx_step_loss',
  /** counter {arm}: optimizer steps committed */
  stepsCommittedTotal: 'rx_steps_committed_total',
  /** histogram {stage, arm}: wall seconds a stage spent on one step */
  stageDurationSeconds: 'rx_stage_duration_seconds',
  /** counter {stage, arm}: rollouts a stage processed */
  rolloutsProcessedTotal: 'rx_rollouts_processed_total',
  /** counter {queue, outcome}: attempts of jobs, by the queue they were taken from and what each ended in (JOB_OUTCOMES) */
  jobAttemptsTotal: 'rx_job_attempts_total',
  /** counter {queue}: jobs moved to the dead-letter queue, by the queue they came from */
  deadLettersTotal: 'rx_dead_letters_total',
  /** histogram {operation}: seconds of one PolicyBackend call */
  backendRequestDurationSeconds: 'rx_backend_request_duration_seconds',
  /** counter {operation}: PolicyBackend calls that threw */
  backendRequestErrorsTotal: 'rx_backend_request_errors_total',
  /** gauge {queue}: jobs waiting, delayed, prioritized or active */
  queueDepthJobs: 'rx_queue_depth_jobs',
  /** gauge {queue}: age of the oldest waiting job (0 when none waits) */
  queueOldestWaitingAgeSeconds: 'rx_queue_oldest_waiting_age_seconds',
} as const);

export type MetricName = (typeof METRIC_NAMES)[keyof typeof METRIC_NAMES];

export const STAGE_DURATION_BUCKETS_SECONDS = [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 60, 120, 300, 600, 1800];
export const BACKEND_DURATION_BUCKETS_SECONDS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300];
