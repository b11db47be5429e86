// Deterministic BullMQ job ids: the same (run, arm, step, stage) always names the same job.
import { STAGE_NAMES, type StageName } from './stage-name';
import type { StepHeader } from './step-header.schema';

// id = `<run>-<arm>-<step>-<stage>[-a<n>]` (arm has no '-', so the last three fields parse back unambiguously); the
// chain suffix `-a<n>` names a step requested again by attempt n of a run after its earlier chain died (a dead job
// keeps its id, and BullMQ would drop a new job under it); every job of that chain carries it (chainOfJobId)
export function jobIdFor(header: StepHeader, stage: StageName, chain = ''): string {
  return `${header.runId}-${header.arm}-${header.step}-${stage}${chain}`;
}

/** the suffix `-a<n>` of a step request's chain, for `attempt` n of a run */
export function chainSuffix(attempt: number): string {
  return `-a${attempt}`;
}

// the chain suffix of a step's job id: '' for the first chain of a step, `-a<n>` for a later one
const STAGE = STAGE_NAMES.join('|');
const CHAIN = new RegExp(`-(?:${STAGE})(-a\\d{1,6})(?:-|$)`);

export function chainOfJobId(jobId: string | undefined): string {
  return (jobId && CHAIN.exec(jobId)?.[1]) || '';
}

// `<run>-<arm>-<step>-<stage>[-...]` back to its header (arms have no '-'; a run id may); null for any other id
const JOB_ID = new RegExp(`^([A-Za-z0-9][A-Za-z0-9_.-]{0,63})-([a-z][a-z0-9_]{0,31})-(\\d{1,9})-(${STAGE})(?:-.*)?$`);

export function parseJobId(jobId: string): StepHeader | null {
  const m = JOB_ID.exec(jobId);
  return m ? { runId: m[1], arm: m[2], step: Number(m[3]) } : null;
}

// id = `<source queue>-<source job id with ':' replaced>-dead`
export function deadLetterJobId(sourceQueue: string, sourceJobId: string | undefined, receivedAtMs: number): string {
  const source = (sourceJobId ?? `anonymous-${receivedAtMs}`).replace(/:/g, '_');
  return `${sourceQueue}-${source}-dead`;
}

// id = `<run>-<arm>-<step>-<stage>-failed-<ms>`: a step-failed event never takes the id its step-complete will use,
// and a step that fails again after a resume gets an event of its own
export function stepFailedJobId(header: StepHeader, stage: StageName, receivedAtMs: number): string {
  return `${jobIdFor(header, stage)}-failed-${receivedAtMs}`;
}
