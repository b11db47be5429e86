// The correctness preflight as the exchange records it, from this run's preflight.json: ONE mapping, so a change
// of the preflight's output (issue 13 adds reference_max_abs, revisions, precision and normalization per path)
// changes this function only. Revisions are pinned as `<file> sha256 <hex>` of files shipped under
// exchange/files/ with the sha256 the run's code revision recorded (what ran); the stock baseline also names the
// tinker-cookbook commit whose semantics stock-datum.reference.ts re-states.
import type { PreflightPath } from '@rx/exchange-record';
import type { PreflightResult } from '../phases/preflight/preflight.phase';
import type { ToleranceRecord } from '../phases/preflight/baseline-path.check';

/** the files each revision names, relative to the repository root */
export const REVISION_FILES = {
  baseline: ['apps/controller/src/phases/preflight/stock-datum.reference.ts'],
  reference: ['libs/preflight/src/importance-sampling.reference.ts', 'libs/estimators/src/kernel-baseline.reference.ts'],
  implementation: [
    'libs/pipeline/src/stages/advantage.stage.ts',
    'libs/pipeline/src/stages/train.stage.ts',
    'libs/estimators/src/kernel-baseline.ts',
    'libs/estimators/src/group-mean.ts',
    'libs/preflight/src/importance-sampling.ts',
  ],
} as const;

export const SHIPPED_FILES_DIR = 'exchange/files';

/** `<shipped file> sha256 <hex>` for each file, with the hash the run's code revision recorded (null: not recorded) */
function pins(files: readonly string[], codeFiles: Record<string, string>): string {
  return files.map((f) => `${SHIPPED_FILES_DIR}/${f} sha256 ${codeFiles[f] ?? 'not-recorded'}`).join(', ');
}

function errorsOf(r: ToleranceRecord & { reference_max_abs?: number }): PreflightPath['errors'][string] {
  // reference_max_abs is not in this preflight's output yet (issue 13 adds it): 0 makes the check max_abs <= atol
  return { max_abs_error: r.max_abs_error, reference_max_abs: r.reference_max_abs ?? 0, relative_l2_error: r.relative_l2_error, cosine_similarity: r.cosine };
}

export function correctnessPaths(preflight: PreflightResult, codeFiles: Record<string, string>): PreflightPath[] {
  const commit = /\b[0-9a-f]{40}\b/.exec(preflight.resolved_by_run.baseline)?.[0] ?? 'no-commit-recorded';
  return preflight.baseline_path.map((b) => ({
    id: b.path_id,
    fixed_input: {
      sha256: b.fixed_batch_sha256,
      description: `the fixed GRPO batch (${b.rollouts} rollouts, ${b.action_tokens} action tokens): the loop with the treatment disabled vs the stock path and the float64 reference`,
    },
    baseline_revision: `tinker-cookbook ${commit} (rl/data_processing.py compute_advantages and the datum layout), restated in ${pins(REVISION_FILES.baseline, codeFiles)}`,
    reference_revision: pins(REVISION_FILES.reference, codeFiles),
    implementation_revision: pins(REVISION_FILES.implementation, codeFiles),
    precision: 'float64 throughout: advantages, logprobs of the fixed batch, the importance-sampling loss and its gradient',
    normalization: 'importance_sampling loss = -sum over action tokens of exp(lp - lp_sampled) * A (a sum, no token-count normalization); gradient = dLoss/dlogprob per action token, concatenated over datums; prompt positions excluded',
    errors: {
      baseline_loss: errorsOf(b.baseline_loss),
      baseline_gradient: errorsOf(b.baseline_gradient),
      reference_loss: errorsOf(b.reference_loss),
      reference_gradient: errorsOf(b.reference_gradient),
    },
  }));
}
