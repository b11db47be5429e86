// The six activation-gate metrics, computed from logged batches.
import { pearson, percentile } from '@rx/stats';
import type { GateMetricName } from './gate-metric-name';
import type { HeldoutPromptRewards, LoggedBatch, LoggedRollout } from './logged-batch';

export interface GateMetricsInput {
  batches: readonly LoggedBatch[];
  /** name of the kernel-baseline arm */
  treatmentArm: string;
  /** name of the group-mean arm */
  baselineArm: string;
  /** held-out per-prompt rewards of the pilot prompts */
  heldout: readonly HeldoutPromptRewards[];
  /** pilot_mean_reward covers the first this many treatment steps (2 in the spec) */
  pilotSteps: number;
}

export interface GateMetrics {
  executed_group_size_treatment: number[];
  executed_group_size_baseline: number[];
  pilot_mean_reward: number | null;
  kernel_effective_neighbors_p10: number | null;
  frac_nonzero_advantage_treatment: number | null;
  baseline_reward_corr: number | null;
  /** why a metric has no value */
  missing: Partial<Record<GateMetricName, string>>;
  counts: {
    treatmentRollouts: number;
    baselineRollouts: number;
    /** the treatment steps that pilot_mean_reward averaged over */
    pilotSteps: number[];
    /** rollouts paired with a held-out mean for baseline_reward_corr */
    corrPairs: number;
    heldoutPrompts: number;
    /** held-out prompts with no treatment rollout */
    heldoutUnmatched: number;
    /** the set of held-out sample counts per prompt */
    heldoutSamplesPerPrompt: number[];
  };
}

/** |A| above this counts as a nonzero advantage */
export const NONZERO_ADVANTAGE_EPS = 1e-6;

export function gateMetrics(input: GateMetricsInput): GateMetrics {
  if (!(Number.isInteger(input.pilotSteps) && input.pilotSteps > 0)) throw new RangeError(`pilotSteps must be a positive integer, got ${input.pilotSteps}`);
  const treatment = input.batches.filter((b) => b.arm === input.treatmentArm);
  const baseline = input.batches.filter((b) => b.arm === input.baselineArm);
  treatment.forEach(checkBatch);
  const treatmentRollouts = treatment.flatMap((b) => b.rollouts);
  const missing: GateMetrics['missing'] = {};

  const steps = [...new Set(treatment.map((b) => b.step))].sort((a, b) => a - b).slice(0, input.pilotSteps);
  const pilotRollouts = treatment.filter((b) => steps.includes(b.step)).flatMap((b) => b.rollouts);
  const pilotMeanReward = mean(pilotRollouts.map((r) => r.reward));
  const noTreatment = `no logged rollouts of the treatment arm '${input.treatmentArm}'`;
  if (pilotMeanReward === null) missing.pilot_mean_reward = noTreatment;

  const neighbors = treatmentRollouts.map((r) => r.effectiveNeighbors);
  const p10 = neighbors.length > 0 ? percentile(neighbors, 10) : null;
  if (p10 === null) missing.kernel_effective_neighbors_p10 = noTreatment;

  const frac = treatmentRollouts.length > 0 ? treatmentRollouts.filter((r) => Math.abs(r.advantage) > NONZERO_ADVANTAGE_EPS).length / treatmentRollouts.length : null;
  if (frac === null) missing.frac_nonzero_advantage_treatment = noTreatment;

  const corr = baselineRewardCorrelation(treatmentRollouts, input.heldout);
  if (corr.value === null) missing.baseline_reward_corr = corr.why;

  const gsTreatment = executedGroupSizes(treatment);
  const gsBaseline = executedGroupSizes(baseline);
  if (gsTreatment.length === 0) missing.executed_group_size_treatment = noTreatment;
  if (gsBaseline.length === 0) missing.executed_group_size_baseline = `no logged rollouts of the baseline arm '${input.baselineArm}'`;

  return {
    executed_group_size_treatment: gsTreatment,
    executed_group_size_baseline: gsBaseline,
    pilot_mean_reward: pilotMeanReward,
    kernel_effective_neighbors_p10: p10,
    frac_nonzero_advantage_treatment: frac,
    baseline_reward_corr: corr.value,
    missing,
    counts: {
      treatmentRollouts: treatmentRollouts.length,
      baselineRollouts: baseline.reduce((s, b) => s + b.rollouts.length, 0),
      pilotSteps: steps,
      corrPairs: corr.pairs,
      heldoutPrompts: input.heldout.length,
      heldoutUnmatched: corr.unmatched,
      heldoutSamplesPerPrompt: [...new Set(input.heldout.map((h) => h.rewards.length))].sort((a, b) => a - b),
    },
  };
}

// executed group size = { #rollouts of prompt p in batch B : B logged, p a distinct prompt of B }
export function executedGroupSizes(batches: readonly LoggedBatch[]): number[] {
  const sizes = new Set<number>();
  for (const batch of batches) {
    const perPrompt = new Map<string, number>();
    for (const r of batch.rollouts) perPrompt.set(r.promptId, (perPrompt.get(r.promptId) ?? 0) + 1);
    for (const n of perPrompt.values()) sizes.add(n);
  }
  return [...sizes].sort((a, b) => a - b);
}

// corr = pearson(b_i, mean of the held-out rewards of i's prompt) over treatment rollouts i with a held-out prompt
function baselineRewardCorrelation(rollouts: readonly LoggedRollout[], heldout: readonly HeldoutPromptRewards[]): { value: number | null; why: string; pairs: number; unmatched: number } {
  const heldoutMean = new Map<string, number>();
  for (const h of heldout) {
    if (heldoutMean.has(h.promptId)) throw new RangeError(`held-out prompt '${h.promptId}' is listed twice`);
    const m = mean(h.rewards);
    if (m === null) throw new RangeError(`held-out prompt '${h.promptId}' has no rewards`);
    if (!Number.isFinite(m)) throw new RangeError(`held-out prompt '${h.promptId}' has a non-finite reward`);
    heldoutMean.set(h.promptId, m);
  }
  const b: number[] = [];
  const y: number[] = [];
  const matched = new Set<string>();
  for (const r of rollouts) {
    const m = heldoutMean.get(r.promptId);
    if (m === undefined) continue;
    b.push(r.baseline);
    y.push(m);
    matched.add(r.promptId);
  }
  const unmatched = heldoutMean.size - matched.size;
  if (heldout.length === 0) return { value: null, why: 'no held-out prompt rewards', pairs: 0, unmatched };
  const r = pearson(b, y);
  if (r.ok) return { value: r.r, why: '', pairs: b.length, unmatched };
  const why = {
    too_few_points: `only ${b.length} treatment rollout(s) on held-out prompts`,
    zero_variance_x: 'the kernel baselines b_i are all equal (zero variance)',
    zero_variance_y: 'the held-out mean rewards are all equal (zero variance)',
    zero_variance_both: 'the kernel baselines and the held-out mean rewards are both constant (zero variance)',
    non_finite: 'a kernel baseline is not finite',
  }[r.reason];
  return { value: null, why, pairs: b.length, unmatched };
}

function checkBatch(batch: LoggedBatch): void {
  batch.rollouts.forEach((r, i) => {
    for (const key of ['reward', 'advantage', 'baseline', 'effectiveNeighbors'] as const) {
      if (!Number.isFinite(r[key])) throw new RangeError(`arm '${batch.arm}' step ${batch.step} rollout ${i}: ${key} is not finite (${r[key]})`);
    }
  });
}

function mean(values: readonly number[]): number | null {
  return values.length === 0 ? null : values.reduce((s, v) => s + v, 0) / values.length;
}
