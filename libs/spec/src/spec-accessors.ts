// Typed read access to a parsed spec: what the services need, in their own terms.
import { DEFAULT_BOUND, type BoundName, type PairedBoundRule } from '@rx/stats';
import { BASELINE_ADVANTAGE, TREATMENT_ADVANTAGE, type ArmSpec, type ExperimentSpec } from './experiment-spec.schema';
import type { GateMetricName } from '@rx/gates';

/** The arm whose advantage is the kernel cross-prompt baseline (GS1). */
export function treatmentArm(spec: ExperimentSpec): ArmSpec {
  return armWith(spec, TREATMENT_ADVANTAGE);
}

/** The group-mean (GRPO) arm. */
export function baselineArm(spec: ExperimentSpec): ArmSpec {
  return armWith(spec, BASELINE_ADVANTAGE);
}

export type ArmRole = 'treatment' | 'baseline';

export function armRole(spec: ExperimentSpec, armName: string): ArmRole {
  if (treatmentArm(spec).name === armName) return 'treatment';
  if (baselineArm(spec).name === armName) return 'baseline';
  throw new RangeError(`no arm named '${armName}' in the spec (arms: ${spec.arms.map((a) => a.name).join(', ')})`);
}

export interface GateCheck {
  metric: GateMetricName;
  measures: string;
  /** allowed values (executed group sizes) */
  oneOf?: number[];
  min?: number;
  max?: number;
}

export function gateChecks(spec: ExperimentSpec): GateCheck[] {
  return spec.activation_gate.checks.map((c) => ({
    metric: c.metric,
    measures: c.measures,
    ...(c.one_of ? { oneOf: c.one_of.map(Number) } : {}),
    ...(c.min !== undefined ? { min: c.min } : {}),
    ...(c.max !== undefined ? { max: c.max } : {}),
  }));
}

/** `{atol, rtol, min_cosine?}`, the shape `@rx/preflight`'s checkTolerance takes */
export interface Tolerance {
  atol: number;
  rtol: number;
  min_cosine?: number;
}

export interface PreflightPathTolerances {
  pathId: string;
  kind: string;
  baselineRevision: string;
  referenceRevision: string;
  tolerances: { baseline_loss: Tolerance; baseline_gradient: Tolerance; reference_loss: Tolerance; reference_gradient: Tolerance };
}

/** The correctness-preflight tolerances, one entry per path of `correctness_preflight.paths`. */
export function preflightTolerances(spec: ExperimentSpec): PreflightPathTolerances[] {
  return spec.correctness_preflight.paths.map((p) => ({
    pathId: p.id,
    kind: p.kind,
    baselineRevision: p.baseline_revision,
    referenceRevision: p.reference_revision,
    tolerances: p.tolerances,
  }));
}

/**
 * rx's tolerance for "the same output" where the spec states none: two training clients loaded from one state may
 * differ per target logprob by at most 1e-2 (a GPU service's logprobs of one input move by about 1e-3 with batch
 * composition and kernels; a different state moves them by far more).
 */
export const DEFAULT_SAME_OUTPUT_TOLERANCE: Readonly<Tolerance> = Object.freeze({ atol: 1e-2, rtol: 0 });

export interface SameOutputTolerance {
  atol: number;
  rtol: number;
  /** 'spec': correctness_preflight.same_output_tolerance; 'rx default': DEFAULT_SAME_OUTPUT_TOLERANCE */
  source: 'spec' | 'rx default';
}

/** The tolerance every "same output" check compares per-token logprobs with (shared init, preflight copies). */
export function sameOutputTolerance(spec: ExperimentSpec): SameOutputTolerance {
  const stated = spec.correctness_preflight.same_output_tolerance;
  return stated ? { atol: stated.atol, rtol: stated.rtol, source: 'spec' } : { ...DEFAULT_SAME_OUTPUT_TOLERANCE, source: 'rx default' };
}

export interface CorrectnessPreflightState {
  required: boolean;
  status: string;
  /** false while the status or any pinned revision still reads UNRESOLVED */
  resolved: boolean;
  /** the fields still unresolved, as JSON paths */
  unresolved: string[];
}

// resolved = no revision and not the status start with "unresolved" (case-insensitive)
export function correctnessPreflight(spec: ExperimentSpec): CorrectnessPreflightState {
  const cp = spec.correctness_preflight;
  const open = (s: string) => /^\s*unresolved/i.test(s);
  const unresolved: string[] = [];
  if (open(cp.status)) unresolved.push('correctness_preflight.status');
  cp.paths.forEach((p, i) => {
    if (open(p.baseline_revision)) unresolved.push(`correctness_preflight.paths[${i}].baseline_revision`);
    if (open(p.reference_revision)) unresolved.push(`correctness_preflight.paths[${i}].reference_revision`);
  });
  return { required: cp.required, status: cp.status, resolved: unresolved.length === 0, unresolved };
}

export interface DecisionRule extends PairedBoundRule {
  method: 'paired_hoeffding';
  /** the pre-registered bound (decision_rule.bound, default hoeffding) */
  bound: BoundName;
  /** the betting bound's item order (decision_rule.betting_order_seed, default 0 where betting is only exploratory) */
  orderSeed: number;
  criterionId: string;
  metric: string;
}

/** The primary criterion with the rule's alpha and its pre-registered bound: pass it to `pairedBound` (or `pairedHoeffding`). */
export function decisionRule(spec: ExperimentSpec): DecisionRule {
  const rule = spec.decision_rule;
  const primary = rule.criteria.find((c) => c.id === 'primary');
  if (!primary) throw new RangeError("the decision rule has no criterion with id 'primary' (parse the spec with parseSpec first)");
  return {
    method: rule.method,
    bound: rule.bound ?? DEFAULT_BOUND,
    orderSeed: rule.betting_order_seed ?? 0,
    alpha: rule.alpha,
    criterionId: primary.id,
    metric: primary.metric,
    bounds: [primary.bounds[0], primary.bounds[1]],
    margin: primary.margin,
    weights: { treatment: primary.weights.treatment, baseline: primary.weights.baseline },
  };
}

export interface Budget {
  gpuHours: number;
  maxWallMinutes: number;
  /** Tinker: all tokens of the run (sampled + prefill + trained), when the spec caps them */
  maxTokens: number | null;
  /** Tinker: US dollars at the pinned price table, when the spec caps them */
  maxUsd: number | null;
  steps: number;
  /** rollouts per step and arm (batch_size) */
  rolloutsPerStep: number;
}

export function budget(spec: ExperimentSpec): Budget {
  return {
    gpuHours: spec.budget.gpu_hours,
    maxWallMinutes: spec.budget.max_wall_minutes,
    maxTokens: spec.budget.max_tokens ?? null,
    maxUsd: spec.budget.max_usd ?? null,
    steps: spec.steps,
    rolloutsPerStep: spec.batch_size,
  };
}

export interface KernelSettings {
  bandwidth: number;
  windowSize: number;
  /** the single pre-registered calibration: bandwidth chosen from these by the gate, on pilot prompts only */
  calibrationBandwidths: number[];
}

/**
 * The kernel baseline's settings. The spec states them only in prose (method, command): bandwidth 0.5, a
 * 256-rollout window, calibration over {0.5, 1.0}. Issue 2 pins them as pre-registered; they are not spec fields.
 */
export function kernelSettings(_spec: ExperimentSpec): KernelSettings {
  return { bandwidth: 0.5, windowSize: 256, calibrationBandwidths: [0.5, 1.0] };
}

export interface PilotSettings {
  steps: number;
  maxWallMinutes: number;
  heldoutPrompts: number;
  heldoutSamplesPerPrompt: number;
}

/**
 * The activation pilot, pinned by the spec's prose: "The cap is 2 pilot steps and 10 wall minutes" (command (c)),
 * "mean training reward over the first 2 treatment steps", "held-out 8-sample per-prompt mean reward, over 64
 * pilot prompts" (activation_gate.checks).
 */
export function pilotSettings(_spec: ExperimentSpec): PilotSettings {
  return { steps: 2, maxWallMinutes: 10, heldoutPrompts: 64, heldoutSamplesPerPrompt: 8 };
}

export interface DevEvalSettings {
  /** the fixed dev sample: train items that are neither RL prompts nor test items */
  items: number;
  /** each arm is scored on it after every `every` updates and at its final weights */
  every: number;
}

/** the dev-accuracy curve rx adds to every run (not spec fields): 128 dev items, every 10 updates */
export const DEV_EVAL_ITEMS = 128;
export const DEV_EVAL_EVERY = 10;

export function devEvalSettings(_spec: ExperimentSpec): DevEvalSettings {
  return { items: DEV_EVAL_ITEMS, every: DEV_EVAL_EVERY };
}

export interface SamplingSettings {
  maxTokens: number;
  temperature: number;
}

/** Training rollouts: max_tokens from feasibility.effective_config, temperature 1.0 (the spec's method). */
export function samplingSettings(spec: ExperimentSpec): SamplingSettings {
  return { maxTokens: spec.feasibility.effective_config.max_tokens, temperature: 1 };
}

export interface EvalSettings {
  benchmark: string;
  nExamples: number;
  maxTokens: number;
  /** greedy decoding */
  temperature: 0;
}

export function evalSettings(spec: ExperimentSpec): EvalSettings {
  return { benchmark: spec.eval.benchmark, nExamples: spec.eval.n_examples, maxTokens: spec.feasibility.effective_config.max_tokens, temperature: 0 };
}

export interface AdamSettings {
  name: string;
  lr: number;
  /** from restoration_preflight's optimizer_config for the arm; null when the spec does not list the arm there */
  adam: { beta1: number; beta2: number; eps: number } | null;
}

export function optimizerSettings(spec: ExperimentSpec, armName: string): AdamSettings {
  const arm = spec.arms.find((a) => a.name === armName);
  if (!arm) throw new RangeError(`no arm named '${armName}' in the spec`);
  const listed = spec.restoration_preflight?.groups.flatMap((g) => g.arms).find((a) => a.name === armName);
  const adam = listed ? { beta1: listed.optimizer_config.beta1, beta2: listed.optimizer_config.beta2, eps: listed.optimizer_config.eps } : null;
  return { name: spec.optimizer.name, lr: arm.lr, adam };
}

function armWith(spec: ExperimentSpec, advantage: string): ArmSpec {
  const arm = spec.arms.find((a) => a.advantage === advantage);
  if (!arm) throw new RangeError(`the spec has no ${advantage} arm (parse it with parseSpec first)`);
  return arm;
}
