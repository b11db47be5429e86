// The correctness preflight as the exchange records it, from this run's preflight.json: ONE mapping, so a change
// of the preflight's output changes this function only (preflight.json already holds each path in the exchange's
// shape, with revisions naming files in the repository). Revisions are pinned as `<file> sha256 <hex>` of files shipped under
// exchange/files/ with the sha256 the run's code revision recorded (what ran); the stock baseline also names the
// tinker-cookbook commit whose semantics stock-datum.reference.ts re-states.
import type { PreflightPath } from '@rx/exchange-record';
import type { ComparisonErrors, PreflightResult } from '@rx/preflight';

/** the files each revision names, relative to the repository root */
export const REVISION_FILES = {
  baseline: ['apps/controller/src/phases/preflight/stock-datum.reference.ts'],
  reference: ['libs/estimators/src/kernel-baseline.reference.ts', 'libs/preflight/src/importance-sampling.reference.ts'],
  implementation: [
    'libs/estimators/src/group-mean.ts',
    'libs/estimators/src/kernel-baseline.ts',
    'libs/pipeline/src/stages/advantage.stage.ts',
    'libs/pipeline/src/datum-builder.ts',
    'libs/pipeline/src/stages/train.stage.ts',
  ],
} as const;

export const SHIPPED_FILES_DIR = 'exchange/files';

/** `<shipped file> sha256 <hex>` for each file, with the hash the run's code revision recorded (null: not recorded) */
function pins(files: readonly string[], codeFiles: Record<string, string>): string {
  return files.map((f) => `${SHIPPED_FILES_DIR}/${f} sha256 ${codeFiles[f] ?? 'not-recorded'}`).join(', ');
}

// a measure the preflight could not compute (written as null) counts as the worst value
function errorsOf(e: ComparisonErrors): PreflightPath['errors'][string] {
  return {
    max_abs_error: e.max_abs_error ?? Number.MAX_VALUE,
    reference_max_abs: e.reference_max_abs ?? 0,
    relative_l2_error: e.relative_l2_error ?? Number.MAX_VALUE,
    cosine_similarity: e.cosine_similarity ?? 0,
  };
}

export function correctnessPaths(preflight: PreflightResult, codeFiles: Record<string, string>): PreflightPath[] {
  return preflight.paths.map((p) => {
    const commit = /\b[0-9a-f]{40}\b/.exec(p.baseline_revision)?.[0] ?? 'no-commit-recorded';
    return {
      id: p.id,
      fixed_input: p.fixed_input,
      baseline_revision: `tinker-cookbook ${commit} (tinker_cookbook/rl/data_processing.py compute_advantages, trajectory_to_data), restated in ${pins(REVISION_FILES.baseline, codeFiles)}`,
      reference_revision: pins(REVISION_FILES.reference, codeFiles),
      implementation_revision: pins(REVISION_FILES.implementation, codeFiles),
      precision: p.precision,
      normalization: p.normalization,
      errors: {
        baseline_loss: errorsOf(p.errors.baseline_loss),
        baseline_gradient: errorsOf(p.errors.baseline_gradient),
        reference_loss: errorsOf(p.errors.reference_loss),
        reference_gradient: errorsOf(p.errors.reference_gradient),
      },
    };
  });
}
