// One line of an arm's metrics.jsonl (flat, one per step) and of its transcripts.jsonl (a few rollouts per step).
// Keys follow the tinker-cookbook's metrics.jsonl where it has one (env/all/…, optim/…, time/…, progress/…);
// rx's own quantities are under rx/.
import { z } from 'zod';

const finite = z.number().finite();
const fraction = z.number().min(0).max(1);

export const stepMetricsLineSchema = z.object({
  step: z.number().int().nonnegative(),
  'progress/done_frac': z.number().min(0).max(1),
  'optim/lr': finite,
  'env/all/reward/total': finite,
  'env/all/correct': z.number().min(0).max(1),
  'env/all/format': z.number().min(0).max(1),
  /** mean completion tokens per rollout */
  'env/all/ac_tokens_per_turn': finite,
  'env/all/total_episodes': z.number().int().nonnegative(),
  'optim/kl_sample_train_v1': finite.optional(),
  'optim/kl_sample_train_v2': finite.optional(),
  'optim/entropy': finite.optional(),
  /** forward_backward('importance_sampling') loss, summed over datums and positions */
  'rx/loss_sum': finite,
  'rx/frac_nonzero_advantage': z.number().min(0).max(1),
  'rx/effective_neighbors/p10': finite,
  'rx/effective_neighbors/p50': finite,
  'rx/effective_neighbors/p90': finite,
  /** rollouts whose kernel mass fell below the floor (baseline = window mean) */
  'rx/fallback_count': z.number().int().nonnegative(),
  // the batch's training signals (@rx/batch-signals; absent in lines written before them). A group is the step's
  // rollouts of one prompt. The cookbook's by_group split: rewards all equal and >= 0.5, all equal and < 0.5, not all equal
  'env/all/by_group/frac_mixed': fraction.optional(),
  'env/all/by_group/frac_all_good': fraction.optional(),
  'env/all/by_group/frac_all_bad': fraction.optional(),
  /** groups whose every rollout is correct / wrong */
  'rx/by_group/frac_all_correct': fraction.optional(),
  'rx/by_group/frac_all_wrong': fraction.optional(),
  /** group mean: groups whose rewards have zero spread (<= 1e-12); kernel (GS1): rollouts with |baseline - reward| <= 1e-12 */
  'rx/frac_reward_zero_std': fraction.optional(),
  /** population standard deviation of the step's rewards */
  'rx/reward/std': finite.nonnegative().optional(),
  /** completions cut by a length limit before the stop token (stop reason 'length': max_tokens, or the model's context); absent when the step record has no stop reasons */
  'rx/completions/clipped_ratio': fraction.optional(),
  /** the longest completion of the step, in tokens (the mean is env/all/ac_tokens_per_turn) */
  'rx/completions/max_length': z.number().int().nonnegative().optional(),
  'time/prepare': finite.optional(),
  'time/sample': finite.optional(),
  'time/grade': finite.optional(),
  'time/advantage': finite.optional(),
  'time/train': finite.optional(),
});

export const transcriptLineSchema = z.object({
  step: z.number().int().nonnegative(),
  rolloutId: z.string().max(64),
  promptId: z.string().max(200),
  prompt: z.string(),
  completion: z.string(),
  reward: finite,
  correct: z.boolean(),
  format: z.boolean(),
  advantage: finite,
});

export type StepMetricsLine = z.infer<typeof stepMetricsLineSchema>;
export type TranscriptLine = z.infer<typeof transcriptLineSchema>;
