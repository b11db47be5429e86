// What the trainer measured of the sampler/learner mismatch on a step's completion tokens (the cookbook's
// optim/kl_sample_train_v1, optim/kl_sample_train_v2 and optim/entropy).
import { z } from 'zod';

export const trainerLogprobStatsSchema = z.object({
  /** mean over completion tokens of (sampling logprob - learner logprob) */
  klSampleTrainV1: z.number().finite(),
  /** half the mean over completion tokens of (sampling logprob - learner logprob)^2 */
  klSampleTrainV2: z.number().finite().nonnegative(),
  /** minus the mean sampling logprob of the completion tokens */
  entropy: z.number().finite(),
  /** completion tokens the three are averaged over */
  tokens: z.number().int().nonnegative(),
});

export type TrainerLogprobStats = z.infer<typeof trainerLogprobStatsSchema>;
