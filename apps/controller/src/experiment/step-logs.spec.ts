import { stepMetricsLine, type StepRecord } from '@rx/contracts';
import { stepTranscripts } from './step-logs';

const rollout = (i: number, o: { reward: number; correct: boolean; formatOk: boolean; tokens: number; fallback: boolean; clipped?: boolean; baseline?: number }) => ({
  rolloutId: `3-${i}`,
  promptId: `p${i}`,
  phi: [1, -1] as [number, number],
  completionTokens: o.tokens,
  stopReason: o.clipped ? ('length' as const) : ('stop' as const),
  reward: o.reward,
  correct: o.correct,
  formatOk: o.formatOk,
  advantage: o.reward - 0.25,
  baseline: o.baseline ?? 0.25,
  effectiveNeighbors: 9,
  fallback: o.fallback,
  dropped: false,
});

const record: StepRecord = {
  runId: 'r1.t1',
  arm: 'gs1_kernel',
  step: 3,
  estimator: 'kernel_cross_prompt_baseline',
  rollouts: [
    rollout(0, { reward: 1, correct: true, formatOk: true, tokens: 10, fallback: false }),
    rollout(1, { reward: 0, correct: false, formatOk: true, tokens: 20, fallback: true, baseline: 0 }),
    rollout(2, { reward: -0.1, correct: false, formatOk: false, tokens: 30, fallback: false }),
    rollout(3, { reward: 0, correct: false, formatOk: true, tokens: 40, fallback: true, clipped: true }),
  ],
  datums: 4,
  loss: -0.5,
  optimizerStep: 4,
  learningRate: 4e-5,
  gate: { executedGroupSize: 1, rewardMean: 0.225, fracNonzeroAdvantage: 1, effectiveNeighbors: { p10: 8.5, p50: 12, p90: 20 }, fallbackFraction: 0.5 },
  timings: { sample: 1.5, train: 0.25 },
  samplerPath: 'embedded://w/3',
  committedAt: '2026-01-01T00:00:00.000Z',
  logprobStats: { klSampleTrainV1: 0.001, klSampleTrainV2: 0.0004, entropy: 1.2, tokens: 100 },
  transcripts: [
    { rolloutId: '3-1', tokens: [104, 105] },
    { rolloutId: '3-9', tokens: [1] },
  ],
};

describe('an arm\'s metrics.jsonl line (the cookbook\'s key names)', () => {
  it('counts correct, format, fallbacks and mean completion length from the rollouts; KL and timings from the record', () => {
    const line = stepMetricsLine(record, 40);
    // rewards 1, 0, -0.1, 0: mean 0.225, sum of squares 1.01, var 1.01/4 - 0.225^2 = 0.201875
    expect(line['rx/reward/std']).toBeCloseTo(Math.sqrt(0.201875), 14);
    expect(line).toEqual({
      step: 3,
      'progress/done_frac': 0.1,
      'optim/lr': 4e-5,
      'env/all/reward/total': 0.225,
      'env/all/correct': 0.25,
      'env/all/format': 0.75,
      'env/all/ac_tokens_per_turn': 25,
      'env/all/total_episodes': 4,
      'optim/kl_sample_train_v1': 0.001,
      'optim/kl_sample_train_v2': 0.0004,
      'optim/entropy': 1.2,
      'rx/loss_sum': -0.5,
      'rx/frac_nonzero_advantage': 1,
      'rx/effective_neighbors/p10': 8.5,
      'rx/effective_neighbors/p50': 12,
      'rx/effective_neighbors/p90': 20,
      'rx/fallback_count': 2,
      // four one-rollout groups (GS1): rewards 1 (all good, correct), 0, -0.1, 0 (all bad, wrong)
      'env/all/by_group/frac_mixed': 0,
      'env/all/by_group/frac_all_good': 0.25,
      'env/all/by_group/frac_all_bad': 0.75,
      'rx/by_group/frac_all_correct': 0.25,
      'rx/by_group/frac_all_wrong': 0.75,
      // only rollout 1's kernel baseline (0) equals its reward
      'rx/frac_reward_zero_std': 0.25,
      'rx/reward/std': line['rx/reward/std'],
      // rollout 3 (40 tokens) was cut by max_tokens
      'rx/completions/clipped_ratio': 0.25,
      'rx/completions/max_length': 40,
      'time/sample': 1.5,
      'time/train': 0.25,
    });
  });

  it('leaves the clipped fraction out of a record without stop reasons (written before the field)', () => {
    const line = stepMetricsLine({ ...record, rollouts: record.rollouts.map(({ stopReason: _, ...r }) => r) }, 40);
    expect(line['rx/completions/clipped_ratio']).toBeUndefined();
    expect(line['rx/completions/max_length']).toBe(40);
  });

  it('leaves the KL keys out when the backend gave no learner logprobs', () => {
    const line = stepMetricsLine({ ...record, logprobStats: undefined }, 40);
    expect(Object.keys(line).filter((k) => k.startsWith('optim/') && k !== 'optim/lr')).toEqual([]);
  });
});

describe('an arm\'s transcripts.jsonl lines', () => {
  it('decodes each kept completion with its question, reward and advantage; a kept id not in the batch is skipped', () => {
    const lines = stepTranscripts(record, (id) => `question of ${id}`, (tokens) => String.fromCharCode(...tokens));
    expect(lines).toEqual([{ step: 3, rolloutId: '3-1', promptId: 'p1', prompt: 'question of p1', completion: 'hi', reward: 0, correct: false, format: true, advantage: -0.25 }]);
  });
});
