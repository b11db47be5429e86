// The sliding window of earlier rollouts that the advantage service keeps per arm (immutable values).
import { DEFAULT_WINDOW_SIZE, kernelBaseline, type KernelOptions } from './kernel-baseline';
import type { RolloutAdvantage, ScoredRollout } from './rollout';

export interface RolloutWindow {
  /** most rollouts kept */
  readonly capacity: number;
  /** most recent first; never holds a rolloutId twice */
  readonly rollouts: readonly ScoredRollout[];
}

// an empty window of `capacity` rollouts (256 pre-registered)
export function emptyWindow(capacity: number = DEFAULT_WINDOW_SIZE): RolloutWindow {
  if (!Number.isInteger(capacity) || capacity < 1) {
    throw new RangeError(`window capacity must be a positive integer, got ${capacity}`);
  }
  return Object.freeze({ capacity, rollouts: Object.freeze([]) as readonly ScoredRollout[] });
}

// rollouts' = (reverse(batch) minus ids already held) ++ rollouts, first `capacity` kept (newest first)
export function appendToWindow(window: RolloutWindow, batch: readonly ScoredRollout[]): RolloutWindow {
  const seen = new Set(window.rollouts.map((r) => r.rolloutId));
  const fresh: ScoredRollout[] = [];
  for (let k = batch.length - 1; k >= 0; k--) {
    const r = batch[k];
    if (seen.has(r.rolloutId)) continue;
    seen.add(r.rolloutId);
    fresh.push(r);
  }
  const rollouts = [...fresh, ...window.rollouts].slice(0, window.capacity);
  return Object.freeze({ capacity: window.capacity, rollouts: Object.freeze(rollouts) });
}

// kernelBaseline(batch, window.rollouts minus the batch's own ids, windowSize = opts.windowSize ?? window.capacity)
export function kernelAdvantagesForWindow(
  batch: readonly ScoredRollout[],
  window: RolloutWindow,
  opts: KernelOptions,
): RolloutAdvantage[] {
  // the window may already hold this batch (appended before the call): those are not "earlier" rollouts
  const ids = new Set(batch.map((r) => r.rolloutId));
  const earlier = window.rollouts.filter((r) => !ids.has(r.rolloutId));
  return kernelBaseline(batch, earlier, { bandwidth: opts.bandwidth, windowSize: opts.windowSize ?? window.capacity });
}
