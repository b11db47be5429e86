// A resumed run must be the run it claims to be: its spec.json, its effective configuration and the code it runs
// are those its earlier attempts ran. A change is refused in one line naming what changed, unless the user says
// --accept-changes; then the changes are recorded on the attempt (state.json, and the record's attempts) as its
// revision. And a run that ended failed says what failed and what this attempt does again.
import { readRunFileIfExists, type RunDir, type RunManifest, type RunState } from '@rx/run-dir';
import type { ExperimentSpec } from '@rx/spec';
import { canonicalJson, sha256Hex } from '@rx/run-dir';
import { RunUserError } from '../composition/run-options';

/** sha256 over the files of a code revision that decide what a run computes: no tests, docs, benches or chaos */
export function codeRelevantSha256(files: Record<string, string>): string {
  const relevant = Object.entries(files)
    .filter(([f]) => /^(apps|libs)\/[^/]+\/src\/|^models\/|^package(-lock)?\.json$|^tools\/register\.js$/.test(f))
    .filter(([f]) => !/\.(spec|int-spec|acceptance|browser|e2e[^/]*)\.ts$|\.md$|\/testing\//.test(f) && !f.startsWith('apps/pipeline-e2e/'))
    .sort(([a], [b]) => (a < b ? -1 : 1));
  return sha256Hex(canonicalJson(relevant));
}

/** what differs between the run as recorded and as it would resume now, one short phrase each */
export function changesSinceStart(dir: RunDir, manifest: RunManifest, spec: ExperimentSpec, state: RunState, codeSha256: string | null): string[] {
  const changes: string[] = [];
  const specSha = sha256Hex(canonicalJson(spec));
  if (specSha !== manifest.spec.sha256) changes.push(`spec.json was edited (sha256 ${specSha.slice(0, 12)}, run.json records ${manifest.spec.sha256.slice(0, 12)})`);
  const effective = readRunFileIfExists(dir, 'effective-config.json');
  if (effective) {
    if (effective.spec_sha256 !== manifest.spec.sha256) changes.push(`effective-config.json names another spec (sha256 ${effective.spec_sha256.slice(0, 12)})`);
    if (effective.run_id !== manifest.runId) changes.push(`effective-config.json names another run (${effective.run_id})`);
    if (effective.backend !== manifest.backend) changes.push(`effective-config.json names the ${effective.backend} backend, run.json ${manifest.backend}`);
  }
  const ran = state.attempts.map((a) => a.codeRelevantSha256).filter((c): c is string => c !== undefined);
  const last = ran[ran.length - 1];
  if (codeSha256 !== null && last !== undefined && last !== codeSha256) changes.push(`the code changed (sha256 ${codeSha256.slice(0, 12)} over the sources that decide the results, the last attempt ran ${last.slice(0, 12)})`);
  return changes;
}

/** refuses a resume whose run changed, unless accepted; returns the accepted changes (to record) */
export function checkSameRun(dir: RunDir, manifest: RunManifest, spec: ExperimentSpec, state: RunState, codeSha256: string | null, accept: boolean): string[] {
  const changes = changesSinceStart(dir, manifest, spec, state, codeSha256);
  if (changes.length === 0 || accept) return changes;
  throw new RunUserError(
    `--resume ${dir.root}: run ${manifest.runId} is not the run it was: ${changes.join('; ')}; restore it, or add --accept-changes to resume anyway (recorded as a revision of the run); nothing was written`,
  );
}

/** for a run that ended failed: what failed, and what this attempt does again */
export function failedRunLine(state: RunState, nextPhase: string | null): string | null {
  if (state.status !== 'failed') return null;
  const arms = Object.entries(state.arms)
    .filter(([, a]) => !a.done)
    .map(([name, a]) => `${name} from step ${a.stepsDone}`);
  const redo = nextPhase === null ? 'nothing is left to do but the record' : `${nextPhase} runs again${nextPhase === 'training' && arms.length > 0 ? ` (${arms.join(', ')})` : ''}; the phases done are kept`;
  return `the last attempt failed: ${state.reason ?? 'no reason recorded'}; ${redo}`;
}
