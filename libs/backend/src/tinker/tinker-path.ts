// `tinker://{run_id}/{kind}/{name}` checkpoint paths (kind: `weights` for training state, `sampler_weights`
// for weights saved for sampling). The run id is the training client's model id, which may contain ':'.

export type TinkerPathKind = 'weights' | 'sampler_weights';

export interface TinkerPath {
  runId: string;
  kind: TinkerPathKind;
  name: string;
}

const SCHEME = 'tinker://';
const NAME_PATTERN = /^[A-Za-z0-9._-]+$/;

/** True when `name` can be a checkpoint name (one path segment: letters, digits, '.', '_', '-'). */
export function isValidCheckpointName(name: string): boolean {
  return NAME_PATTERN.test(name) && name !== '.' && name !== '..';
}

export function formatTinkerPath(path: TinkerPath): string {
  return `${SCHEME}${path.runId}/${path.kind}/${path.name}`;
}

/** Parses a tinker:// path; returns undefined when it is not one (exactly three '/'-separated parts). */
export function parseTinkerPath(text: string): TinkerPath | undefined {
  if (!text.startsWith(SCHEME)) return undefined;
  const parts = text.slice(SCHEME.length).split('/');
  if (parts.length !== 3) return undefined;
  const [runId, kind, name] = parts as [string, string, string];
  if (!runId || (kind !== 'weights' && kind !== 'sampler_weights') || !isValidCheckpointName(name)) return undefined;
  return { runId, kind, name };
}
