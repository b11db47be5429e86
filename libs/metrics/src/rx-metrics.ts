// The one prom-client Registry of a process, with every rx metric registered and typed setters whose label
// values can only come from the enums of metric-labels.ts.
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import { batchSignals, type BatchSignals } from '@rx/batch-signals';
import type { ArmName, QueueName, StageName, StepRecord } from '@rx/contracts';
import {
  BACKEND_DURATION_BUCKETS_SECONDS,
  METRIC_NAMES,
  STAGE_DURATION_BUCKETS_SECONDS,
} from './metric-names';
import { DECISION_OUTCOMES, GROUP_KINDS, type BackendOperation, type JobOutcome, type GroupKind, type DecisionOutcome, type GateName, type GateSide, type ModelName, type NeighborQuantile, type ServiceName } from './metric-labels';

export interface QueueSnapshot {
  queue: QueueName;
  /** jobs waiting, delayed, prioritized or active */
  depth: number;
  /** seconds since the oldest waiting job was added (0 when none waits) */
  oldestWaitingAgeSeconds: number;
}

export interface StepMetrics {
  /** the step's index (0-based) */
  step?: number;
  rewardMean: number;
  fracNonzeroAdvantage: number;
  effectiveNeighbors: Readonly<Record<NeighborQuantile, number>>;
  loss?: number;
  /** sampler vs learner on the completion tokens, when the trainer measured it */
  logprobStats?: { klSampleTrainV1: number; klSampleTrainV2: number; entropy: number };
  /** the batch's training signals (@rx/batch-signals), when the whole step record is at hand */
  signals?: BatchSignals;
}

/** what the step gauges show of a step record */
export function stepMetricsOf(r: StepRecord): StepMetrics {
  return {
    step: r.step,
    rewardMean: r.gate.rewardMean,
    fracNonzeroAdvantage: r.gate.fracNonzeroAdvantage,
    effectiveNeighbors: r.gate.effectiveNeighbors,
    loss: r.loss,
    ...(r.logprobStats ? { logprobStats: r.logprobStats } : {}),
    signals: batchSignals(r.rollouts, r.estimator),
  };
}

export interface OutcomeMetrics {
  accuracy: Partial<Record<ModelName, number>>;
  effect: number;
  lower: number;
  upper: number;
  margin: number;
  outcome: DecisionOutcome;
}

export interface RxMetricsOptions {
  service: ServiceName;
  /** read at scrape time for the queue depth and oldest-waiting-age gauges */
  queueSnapshot?: () => Promise<readonly QueueSnapshot[]>;
  /** default Node process metrics (on unless a test turns them off) */
  defaultMetrics?: boolean;
}

export interface RxMetrics {
  readonly registry: Registry;
  setGate(labels: { run: string; arm: ArmName; gate: GateName }, value: number, pass: boolean): void;
  setGateBound(gate: GateName, side: GateSide, bound: number): void;
  /** the values a one_of gate allows, in the spec's order */
  setGateAllowedValues(gate: GateName, values: readonly number[]): void;
  setOutcome(outcome: OutcomeMetrics): void;
  /** marks `phase` as the current one of `phases` (a closed list: the run's phases) */
  setPhase(phase: string, phases: readonly string[]): void;
  recordStep(arm: ArmName, step: StepMetrics): void;
  stepCommitted(arm: ArmName): void;
  observeStage(stage: StageName, arm: ArmName, seconds: number): void;
  countRollouts(stage: StageName, arm: ArmName, n: number): void;
  countDeadLetter(queue: QueueName): void;
  /** one attempt of a job taken from `queue`, and what it ended in */
  countJobAttempt(queue: QueueName, outcome: JobOutcome): void;
  observeBackend(operation: BackendOperation, seconds: number, ok: boolean): void;
  /** the Prometheus text exposition of the registry */
  exposition(): Promise<string>;
}

// one registry per call (tests make several in one process); the service name is a default label
export function createRxMetrics(opts: RxMetricsOptions): RxMetrics {
  const registry = new Registry();
  registry.setDefaultLabels({ service: opts.service });
  if (opts.defaultMetrics ?? true) collectDefaultMetrics({ register: registry });
  const registers = [registry];

  const gateValue = new Gauge({ name: METRIC_NAMES.gateValue, help: 'Measured value of an activation gate', labelNames: ['run', 'arm', 'gate'] as const, registers });
  const gatePass = new Gauge({ name: METRIC_NAMES.gatePass, help: 'Activation gate verdict: 1 pass, 0 fail', labelNames: ['run', 'arm', 'gate'] as const, registers });
  const gateBound = new Gauge({ name: METRIC_NAMES.gateBound, help: 'Bound of an activation gate from the spec', labelNames: ['gate', 'side'] as const, registers });
  const allowed = new Gauge({ name: METRIC_NAMES.gateAllowedValue, help: 'A value a one_of activation gate allows', labelNames: ['gate', 'index'] as const, registers });
  const stepIndex = new Gauge({ name: METRIC_NAMES.stepIndex, help: 'Index of the last step recorded', labelNames: ['arm'] as const, registers });
  const klSampleTrain = new Gauge({ name: METRIC_NAMES.stepKlSampleTrain, help: 'KL between sampler and learner logprobs of the last step (cookbook v1, v2)', labelNames: ['arm', 'version'] as const, registers });
  const entropy = new Gauge({ name: METRIC_NAMES.stepEntropy, help: 'Minus the mean sampling logprob of the last step', labelNames: ['arm'] as const, registers });
  const accuracy = new Gauge({ name: METRIC_NAMES.outcomeAccuracyRatio, help: 'Greedy accuracy on the evaluation items', labelNames: ['model'] as const, registers });
  const effect = new Gauge({ name: METRIC_NAMES.outcomeEffect, help: 'Paired effect of the decision rule (treatment - baseline)', registers });
  const interval = new Gauge({ name: METRIC_NAMES.outcomeInterval, help: 'Interval of the decision rule', labelNames: ['bound'] as const, registers });
  const margin = new Gauge({ name: METRIC_NAMES.outcomeMargin, help: 'Pre-registered noninferiority margin', registers });
  const decision = new Gauge({ name: METRIC_NAMES.outcomeDecision, help: 'Decision reached: 1 for the outcome, 0 for the others', labelNames: ['outcome'] as const, registers });
  const runPhase = new Gauge({ name: METRIC_NAMES.runPhase, help: 'Phase of the run: 1 for the current one', labelNames: ['phase'] as const, registers });
  const rewardMean = new Gauge({ name: METRIC_NAMES.stepRewardMean, help: 'Mean training reward of the last step', labelNames: ['arm'] as const, registers });
  const nonzero = new Gauge({ name: METRIC_NAMES.stepNonzeroAdvantageRatio, help: 'Fraction of the last step rollouts with |advantage| > 1e-6', labelNames: ['arm'] as const, registers });
  const neighbors = new Gauge({ name: METRIC_NAMES.stepEffectiveNeighbors, help: 'Effective-neighbour quantiles of the last step', labelNames: ['arm', 'quantile'] as const, registers });
  const loss = new Gauge({ name: METRIC_NAMES.stepLoss, help: 'forward_backward loss of the last step', labelNames: ['arm'] as const, registers });
  const zeroStd = new Gauge({ name: METRIC_NAMES.stepRewardZeroStdRatio, help: 'Share of the last step groups with zero reward spread (GS1: rollouts whose kernel baseline equals their reward)', labelNames: ['arm'] as const, registers });
  const groupRatio = new Gauge({ name: METRIC_NAMES.stepGroupRatio, help: 'Share of the last step groups by kind (mixed, all_good, all_bad, all_correct, all_wrong)', labelNames: ['arm', 'group'] as const, registers });
  const clipped = new Gauge({ name: METRIC_NAMES.stepClippedCompletionsRatio, help: 'Share of the last step completions cut by a length limit (max_tokens or the context)', labelNames: ['arm'] as const, registers });
  const completionLength = new Gauge({ name: METRIC_NAMES.stepCompletionLengthTokens, help: 'Completion length of the last step in tokens (mean, max)', labelNames: ['arm', 'stat'] as const, registers });
  const rewardStd = new Gauge({ name: METRIC_NAMES.stepRewardStd, help: 'Population standard deviation of the last step rewards', labelNames: ['arm'] as const, registers });
  const committed = new Counter({ name: METRIC_NAMES.stepsCommittedTotal, help: 'Optimizer steps committed', labelNames: ['arm'] as const, registers });
  const stageDuration = new Histogram({
    name: METRIC_NAMES.stageDurationSeconds,
    help: 'Wall seconds a stage spent on one step',
    labelNames: ['stage', 'arm'] as const,
    buckets: STAGE_DURATION_BUCKETS_SECONDS,
    registers,
  });
  const rollouts = new Counter({ name: METRIC_NAMES.rolloutsProcessedTotal, help: 'Rollouts processed by a stage', labelNames: ['stage', 'arm'] as const, registers });
  const jobAttempts = new Counter({ name: METRIC_NAMES.jobAttemptsTotal, help: 'Job attempts by source queue and outcome (sent, skipped, delivered, failed, dead_lettered)', labelNames: ['queue', 'outcome'] as const, registers });
  const deadLetters = new Counter({ name: METRIC_NAMES.deadLettersTotal, help: 'Jobs moved to the dead-letter queue, by source queue', labelNames: ['queue'] as const, registers });
  const backendDuration = new Histogram({
    name: METRIC_NAMES.backendRequestDurationSeconds,
    help: 'Seconds of one PolicyBackend call',
    labelNames: ['operation'] as const,
    buckets: BACKEND_DURATION_BUCKETS_SECONDS,
    registers,
  });
  const backendErrors = new Counter({ name: METRIC_NAMES.backendRequestErrorsTotal, help: 'PolicyBackend calls that threw', labelNames: ['operation'] as const, registers });

  // both queue gauges share one snapshot per scrape
  let pending: Promise<readonly QueueSnapshot[]> | null = null;
  const snapshot = (): Promise<readonly QueueSnapshot[]> => {
    if (!opts.queueSnapshot) return Promise.resolve([]);
    if (!pending) {
      pending = opts.queueSnapshot().finally(() => setTimeout(() => (pending = null), 250).unref());
    }
    return pending;
  };
  new Gauge({
    name: METRIC_NAMES.queueDepthJobs,
    help: 'Jobs waiting, delayed, prioritized or active',
    labelNames: ['queue'] as const,
    registers,
    async collect() {
      this.reset();
      for (const s of await snapshot()) this.set({ queue: s.queue }, s.depth);
    },
  });
  new Gauge({
    name: METRIC_NAMES.queueOldestWaitingAgeSeconds,
    help: 'Age of the oldest waiting job in seconds (0 when none waits)',
    labelNames: ['queue'] as const,
    registers,
    async collect() {
      this.reset();
      for (const s of await snapshot()) this.set({ queue: s.queue }, s.oldestWaitingAgeSeconds);
    },
  });

  return {
    registry,
    setGate(labels, value, pass) {
      gateValue.set(labels, value);
      gatePass.set(labels, pass ? 1 : 0);
    },
    setGateBound(gate, side, bound) {
      gateBound.set({ gate, side }, bound);
    },
    setGateAllowedValues(gate, values) {
      values.forEach((v, i) => allowed.set({ gate, index: String(i) }, v));
    },
    setOutcome(o) {
      for (const [model, v] of Object.entries(o.accuracy)) if (v !== undefined) accuracy.set({ model }, v);
      effect.set(o.effect);
      interval.set({ bound: 'lower' }, o.lower);
      interval.set({ bound: 'upper' }, o.upper);
      margin.set(o.margin);
      for (const outcome of DECISION_OUTCOMES) decision.set({ outcome }, outcome === o.outcome ? 1 : 0);
    },
    setPhase(phase, phases) {
      for (const p of phases) runPhase.set({ phase: p }, p === phase ? 1 : 0);
    },
    recordStep(arm, step) {
      if (step.step !== undefined) stepIndex.set({ arm }, step.step);
      if (step.logprobStats) {
        klSampleTrain.set({ arm, version: 'v1' }, step.logprobStats.klSampleTrainV1);
        klSampleTrain.set({ arm, version: 'v2' }, step.logprobStats.klSampleTrainV2);
        entropy.set({ arm }, step.logprobStats.entropy);
      }
      rewardMean.set({ arm }, step.rewardMean);
      nonzero.set({ arm }, step.fracNonzeroAdvantage);
      for (const [quantile, v] of Object.entries(step.effectiveNeighbors)) neighbors.set({ arm, quantile }, v);
      if (step.loss !== undefined) loss.set({ arm }, step.loss);
      if (step.signals) {
        const g = step.signals.groups;
        const groups: Record<GroupKind, number> = { mixed: g.mixed, all_good: g.allGood, all_bad: g.allBad, all_correct: g.allCorrect, all_wrong: g.allWrong };
        zeroStd.set({ arm }, step.signals.fracRewardZeroStd);
        for (const group of GROUP_KINDS) groupRatio.set({ arm, group }, groups[group]);
        if (step.signals.lengths.clippedFraction !== null) clipped.set({ arm }, step.signals.lengths.clippedFraction);
        completionLength.set({ arm, stat: 'mean' }, step.signals.lengths.mean);
        completionLength.set({ arm, stat: 'max' }, step.signals.lengths.max);
        rewardStd.set({ arm }, step.signals.rewardStd);
      }
    },
    stepCommitted(arm) {
      committed.inc({ arm });
    },
    observeStage(stage, arm, seconds) {
      stageDuration.observe({ stage, arm }, seconds);
    },
    countRollouts(stage, arm, n) {
      rollouts.inc({ stage, arm }, n);
    },
    countDeadLetter(queue) {
      deadLetters.inc({ queue });
    },
    countJobAttempt(queue, outcome) {
      jobAttempts.inc({ queue, outcome });
    },
    observeBackend(operation, seconds, ok) {
      backendDuration.observe({ operation }, seconds);
      if (!ok) backendErrors.inc({ operation });
    },
    exposition: () => registry.metrics(),
  };
}

export interface MetricSample {
  /** for histograms: <name>_bucket, <name>_sum or <name>_count */
  metricName?: string;
  labels: Record<string, string | number>;
  value: number;
}

/** The current samples of one metric of a registry, with their labels (histograms included). */
export async function metricSamples(registry: Registry, name: string): Promise<MetricSample[]> {
  const metric = registry.getSingleMetric(name);
  if (!metric) throw new Error(`no metric '${name}' in this registry`);
  const { values } = await metric.get();
  return values.map((v) => ({ metricName: (v as { metricName?: string }).metricName, labels: { ...v.labels } as Record<string, string | number>, value: v.value }));
}
