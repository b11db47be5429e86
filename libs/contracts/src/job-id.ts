// Deterministic BullMQ job ids: the same (run, arm, step, stage) always names the same job.
import type { StageName } from './stage-name';
import type { StepHeader } from './step-header.schema';

// id = `<run>-<arm>-<step>-<stage>` (arm has no '-', so the last three fields parse back unambiguously)
export function jobIdFor(header: StepHeader, stage: StageName): string {
  return `${header.runId}-${header.arm}-${header.step}-${stage}`;
}

// id = `<source queue>-<source job id with ':' replaced>-dead`
export function deadLetterJobId(sourceQueue: string, sourceJobId: string | undefined, receivedAtMs: number): string {
  const source = (sourceJobId ?? `anonymous-${receivedAtMs}`).replace(/:/g, '_');
  return `${sourceQueue}-${source}-dead`;
}
