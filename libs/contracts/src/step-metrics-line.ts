// The flat metrics.jsonl line of one step record (keys: step-metrics-line.schema.ts).
import { batchSignals } from '@rx/batch-signals';
import type { StepMetricsLine } from './step-metrics-line.schema';
import type { StepRecord } from './step-record.schema';

const mean = (xs: readonly number[]): number => (xs.length === 0 ? 0 : xs.reduce((a, b) => a + b, 0) / xs.length);

/** the flat metrics line of one step of an arm trained for `steps` steps */
export function stepMetricsLine(r: StepRecord, steps: number): StepMetricsLine {
  const ro = r.rollouts;
  const line: StepMetricsLine = {
    step: r.step,
    'progress/done_frac': Math.min(1, (r.step + 1) / steps),
    'optim/lr': r.learningRate,
    'env/all/reward/total': mean(ro.map((x) => x.reward)),
    'env/all/correct': mean(ro.map((x) => (x.correct ? 1 : 0))),
    'env/all/format': mean(ro.map((x) => (x.formatOk ? 1 : 0))),
    'env/all/ac_tokens_per_turn': mean(ro.map((x) => x.completionTokens)),
    'env/all/total_episodes': ro.length,
    'rx/loss_sum': r.loss,
    'rx/frac_nonzero_advantage': r.gate.fracNonzeroAdvantage,
    'rx/effective_neighbors/p10': r.gate.effectiveNeighbors.p10,
    'rx/effective_neighbors/p50': r.gate.effectiveNeighbors.p50,
    'rx/effective_neighbors/p90': r.gate.effectiveNeighbors.p90,
    'rx/fallback_count': ro.filter((x) => x.fallback).length,
  };
  const signals = batchSignals(ro, r.estimator);
  line['env/all/by_group/frac_mixed'] = signals.groups.mixed;
  line['env/all/by_group/frac_all_good'] = signals.groups.allGood;
  line['env/all/by_group/frac_all_bad'] = signals.groups.allBad;
  line['rx/by_group/frac_all_correct'] = signals.groups.allCorrect;
  line['rx/by_group/frac_all_wrong'] = signals.groups.allWrong;
  line['rx/frac_reward_zero_std'] = signals.fracRewardZeroStd;
  line['rx/reward/std'] = signals.rewardStd;
  if (signals.lengths.clippedFraction !== null) line['rx/completions/clipped_ratio'] = signals.lengths.clippedFraction;
  line['rx/completions/max_length'] = signals.lengths.max;
  if (r.logprobStats) {
    line['optim/kl_sample_train_v1'] = r.logprobStats.klSampleTrainV1;
    line['optim/kl_sample_train_v2'] = r.logprobStats.klSampleTrainV2;
    line['optim/entropy'] = r.logprobStats.entropy;
  }
  for (const [stage, seconds] of Object.entries(r.timings)) if (seconds !== undefined) line[`time/${stage}` as 'time/train'] = seconds;
  return line;
}
