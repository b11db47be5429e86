// Default job options per queue (structurally BullMQ's JobsOptions; contracts import no queue library).

export interface JobDefaults {
  /** total tries, the first included */
  attempts: number;
  /** retry n waits delay * 2^(n-1) ms */
  backoff: { type: 'exponential'; delay: number };
  /** completed jobs kept (by age in seconds and count), so a redelivered id still dedupes for a while */
  removeOnComplete: { age: number; count: number };
  removeOnFail: { age: number; count: number };
}

const HOUR = 3600;
const DAY = 24 * HOUR;

/** Small payloads: keep a day of completed jobs for inspection and job-id dedupe. */
export const LIGHT_JOB_DEFAULTS: JobDefaults = Object.freeze({
  attempts: 3,
  backoff: Object.freeze({ type: 'exponential', delay: 1000 }),
  removeOnComplete: Object.freeze({ age: DAY, count: 1000 }),
  removeOnFail: Object.freeze({ age: 7 * DAY, count: 1000 }),
}) as JobDefaults;

/** Batch payloads (up to ~1 MB each): keep fewer completed jobs, for an hour. */
export const BATCH_JOB_DEFAULTS: JobDefaults = Object.freeze({
  attempts: 3,
  backoff: Object.freeze({ type: 'exponential', delay: 2000 }),
  removeOnComplete: Object.freeze({ age: HOUR, count: 32 }),
  removeOnFail: Object.freeze({ age: 7 * DAY, count: 64 }),
}) as JobDefaults;

/** Dead letters are kept (a human reads them); they are never retried. */
export const DEAD_LETTER_JOB_DEFAULTS: JobDefaults = Object.freeze({
  attempts: 1,
  backoff: Object.freeze({ type: 'exponential', delay: 1000 }),
  removeOnComplete: Object.freeze({ age: 30 * DAY, count: 10000 }),
  removeOnFail: Object.freeze({ age: 30 * DAY, count: 10000 }),
}) as JobDefaults;
