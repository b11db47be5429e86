// The per-step quantities the activation gates are evaluated over (computed by the advantage stage).
import { z } from 'zod';

const finite = z.number().finite();

export const stepGateMetricsSchema = z.object({
  /** rollouts per distinct prompt in the batch (GRPO 8, GS1 1) */
  executedGroupSize: finite,
  /** mean training reward of the batch */
  rewardMean: finite,
  /** fraction of rollouts with |advantage| > 1e-6 */
  fracNonzeroAdvantage: z.number().min(0).max(1),
  /** quantiles over rollouts of the effective neighbours (sum w)^2 / sum w^2 (group mean: group size - 1) */
  effectiveNeighbors: z.object({ p10: finite, p50: finite, p90: finite }),
  /** fraction of rollouts whose kernel mass fell below the floor (baseline = window mean) */
  fallbackFraction: z.number().min(0).max(1),
});

export type StepGateMetrics = z.infer<typeof stepGateMetricsSchema>;
