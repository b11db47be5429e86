// Errors a stage function throws. The job consumer turns them into queue behaviour: retry, or dead letter.

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

export class StageTimeoutError extends Error {
  constructor(what: string, ms: number) {
    super(`${what} took longer than ${ms} ms`);
    this.name = 'StageTimeoutError';
  }
}
