// Errors a stage function throws, and the edge runner's: they become queue behaviour (retry, or dead letter).

/** The job must not be retried (a retry could apply an effect twice, or can never succeed). */
export class UnrecoverableStageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UnrecoverableStageError';
  }
}

/** The job came too early (its predecessor step is not committed yet): retry after the back-off. */
export class OutOfOrderStepError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'OutOfOrderStepError';
  }
}

/** The job was dead-lettered (and its step reported failed): the transport must not retry it. */
export class DeadLetteredError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'DeadLetteredError';
  }
}

export class StageTimeoutError extends Error {
  constructor(what: string, ms: number) {
    super(`${what} took longer than ${ms} ms`);
    this.name = 'StageTimeoutError';
  }
}

// ioredis' words for "Redis is not there right now" (restart, failover, network loss), and the codes of the socket errors
const REDIS_UNAVAILABLE_MESSAGES = [/Stream isn't writeable/, /Connection is closed/, /^LOADING /, /max retries per request limit/i];
const REDIS_UNAVAILABLE_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH']);

/** Redis could not be reached: not the job's fault, so it must not use up the job's attempts. */
export function isRedisUnavailable(err: unknown): boolean {
  if (!(err instanceof Error)) return false;
  if (err.name === 'MaxRetriesPerRequestError') return true;
  const code = (err as { code?: unknown }).code;
  if (typeof code === 'string' && REDIS_UNAVAILABLE_CODES.has(code)) return true;
  return REDIS_UNAVAILABLE_MESSAGES.some((re) => re.test(err.message));
}
