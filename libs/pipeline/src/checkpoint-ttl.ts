// How long the per-step checkpoints live on the backend (Tinker's ttl_seconds): a step's sampler weights and
// its training state are needed while the run is going and for a resume, not for ever; the shared initial
// state and each arm's final sampler weights are saved without a TTL. On the live service an unbounded
// checkpoint counts against the storage quota every step.
import type { SaveOptions } from '@rx/backend';

/** 7 days: a run takes hours, so a resume within a week still finds its last state. */
export const PER_STEP_CHECKPOINT_TTL_SECONDS = 7 * 24 * 3600;

export const PER_STEP_CHECKPOINT: SaveOptions = { ttlSeconds: PER_STEP_CHECKPOINT_TTL_SECONDS };
