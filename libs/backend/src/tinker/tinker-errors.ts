// Errors of the Tinker client. Each says which endpoint, what happened and, for HTTP errors, the status and
// what the server answered (truncated). None carries the API key or request headers.
import type { RequestErrorCategory } from './tinker-wire.schema';

export class TinkerError extends Error {
  override name = 'TinkerError';
}

/** TINKER_* environment missing or malformed (a user mistake: printed as one line). */
export class TinkerConfigError extends TinkerError {
  override name = 'TinkerConfigError';
}

/** The server answered with a non-2xx status that is not retried, or kept answering a retryable one. */
export class TinkerApiError extends TinkerError {
  override name = 'TinkerApiError';
  constructor(
    readonly endpoint: string,
    readonly status: number,
    /** the response body, truncated */
    readonly body: string,
    readonly attempts: number,
    detail: string,
  ) {
    super(`Tinker ${endpoint} answered HTTP ${status} after ${attempts} attempt${attempts === 1 ? '' : 's'}: ${detail}`);
  }
}

/** No answer: connection refused/reset, DNS failure, or the per-request timeout, after all retries. */
export class TinkerConnectionError extends TinkerError {
  override name = 'TinkerConnectionError';
  constructor(
    readonly endpoint: string,
    readonly attempts: number,
    readonly reason: string,
    readonly timedOut: boolean,
  ) {
    super(`Tinker ${endpoint}: ${reason} after ${attempts} attempt${attempts === 1 ? '' : 's'}`);
  }
}

/** A future completed with `{error, category}`: the work request itself failed on the server. */
export class TinkerRequestFailedError extends TinkerError {
  override name = 'TinkerRequestFailedError';
  constructor(
    readonly endpoint: string,
    readonly requestId: string,
    readonly category: RequestErrorCategory,
    readonly serverMessage: string,
  ) {
    super(`Tinker ${endpoint} (request ${requestId}) failed [${category}]: ${serverMessage}`);
  }
}

/** The client was closed while a call was in flight, or used after close(). */
export class TinkerClosedError extends TinkerError {
  override name = 'TinkerClosedError';
}

/**
 * The server no longer knows this client's session, or a model or sampler of it (HTTP 404 on a call that names
 * one, or on the session heartbeat): told apart by status and endpoint, never by the server's wording.
 */
export class TinkerSessionLostError extends TinkerApiError {
  override name = 'TinkerSessionLostError';
}

/**
 * A call made no progress for the stuck timeout (the SDK's progress_timeout, 120 min by default): the service kept
 * answering 429 / 5xx or did not answer. Nothing is lost: the run stops cleanly and `rx run --resume` continues it.
 */
export class TinkerStuckError extends TinkerError {
  override name = 'TinkerStuckError';
  constructor(
    readonly endpoint: string,
    readonly waitedMs: number,
    readonly lastFailure: string,
  ) {
    super(`Tinker ${endpoint} made no progress for ${formatWait(waitedMs)} (the stuck timeout; last: ${lastFailure})`);
  }
}

/** 45 s, 3 min, 2 h 5 min */
export function formatWait(ms: number): string {
  const s = Math.round(ms / 1000);
  if (s < 60) return `${s} s`;
  const min = Math.floor(s / 60);
  if (min < 60) return `${min} min`;
  return `${Math.floor(min / 60)} h${min % 60 ? ` ${min % 60} min` : ''}`;
}
