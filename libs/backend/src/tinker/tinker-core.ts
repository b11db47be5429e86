// What the Tinker training and sampling clients share, as SDK 0.25 does it: the HTTP core; the session
// (client/config, the JWT exchange when the server asks for it, create_session, a heartbeat every 10 s); the
// application-level retries above HTTP (as the SDK's RetryHandler: retryable failures, 429 and 5xx included,
// retried without a count limit, 1 s .. 30 s doubling back-off, the same body and seq_id each time, until the call
// has made no progress for the stuck timeout (120 min); a progress line every minute while waiting; 402 = billing
// pause); and the futures loop
// on retrieve_future (the server long-polls; `try_again` and HTTP 408 mean pending, `{error, category}` a failed
// request, 410 an expired future; sample and forward/backward results asked for and read as protobuf).
import type { ZodType, ZodTypeDef } from 'zod';
import { TinkerApiError, TinkerConnectionError, TinkerError, TinkerRequestFailedError, TinkerSessionLostError, TinkerStuckError, formatWait } from './tinker-errors';
import type { TinkerHttp, TinkerHttpRequest, TinkerHttpResponse } from './tinker-http';
import { TinkerJwtAuth } from './tinker-jwt';
import { doublingDelayMs, isRetryableStatus } from './tinker-retry';
import {
  TINKER_API_PREFIX,
  TINKER_WIRE_SDK_VERSION,
  authTokenResponseSchema,
  clientConfigResponseSchema,
  createSessionResponseSchema,
  requestFailedResponseSchema,
  tryAgainResponseSchema,
  untypedApiFutureSchema,
  type TinkerRequestType,
  type UntypedApiFuture,
} from './tinker-wire.schema';
import { PROTOBUF_CONTENT_TYPE, decodeForwardBackwardOutput, decodeSampleResponse } from './wire/tinker-proto';

export interface TinkerLogger {
  warn(message: string): void;
}

/** The SDK's timings; tests scale them down through TinkerBackendOptions.timing. */
export interface TinkerTiming {
  /**
   * how long one call may make no progress (429, 5xx, no answer) before it fails with TinkerStuckError (the SDK's
   * RetryConfig.progress_timeout: 120 min); retries have no count limit below it
   */
  stuckTimeoutMs: number;
  /** while a call keeps failing, one progress line this often (1 min) */
  waitReportEveryMs: number;
  /** its back-off: base doubling up to max (SDK: 1 s .. 30 s) */
  appRetryBaseDelayMs: number;
  appRetryMaxDelayMs: number;
  /** sleep between tries while the server answers 402 (SDK: 5 s) */
  billingPauseMs: number;
  /** back-off of a poll after 429 or a lost connection (SDK: 1 s .. 30 s) */
  pollBackoffBaseMs: number;
  pollBackoffMaxMs: number;
  /** a poll answered 5xx is retried after this (the SDK retries at once) */
  pollRetryDelayMs: number;
  /** a JWT is refreshed when it expires within this (SDK: 5 min) */
  jwtRefreshBeforeExpiryMs: number;
}

export const DEFAULT_TINKER_TIMING: TinkerTiming = {
  stuckTimeoutMs: 120 * 60_000,
  waitReportEveryMs: 60_000,
  appRetryBaseDelayMs: 1000,
  appRetryMaxDelayMs: 30_000,
  billingPauseMs: 5000,
  pollBackoffBaseMs: 1000,
  pollBackoffMaxMs: 30_000,
  pollRetryDelayMs: 50,
  jwtRefreshBeforeExpiryMs: 300_000,
};

export interface TinkerCoreOptions {
  pollTimeoutMs: number;
  futureTimeoutMs: number;
  heartbeatIntervalMs: number;
  tags: string[];
  logger: TinkerLogger;
  timing: TinkerTiming;
}

export interface TinkerSession {
  sessionId: string;
  /** forward_backward chunking limits announced by client/config (SDK defaults when absent) */
  maxChunkLen: number;
  maxChunkBytes: number;
  /** zstd-compress protobuf forward_backward bodies (client/config proto_compress_fwdbwd) */
  compressForwardBackward: boolean;
  /** how long 402 answers may pause the run before they fail it (billing_exception_max_pause_duration_sec) */
  billingMaxPauseMs: number;
}

/** How long a heartbeat may keep failing before one warning is logged (the SDK's 2 minutes). */
const HEARTBEAT_WARN_AFTER_MS = 120_000;
/** Bare 400 answers to a poll retried (an upstream proxy may inject them), as the SDK. */
const MAX_BAD_REQUEST_POLL_RETRIES = 3;

function summarizeZodIssues(error: { issues: { path: (string | number)[]; message: string }[] }): string {
  return error.issues
    .slice(0, 3)
    .map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`)
    .join('; ');
}

/** True for what execute_with_retries retries: lost connections, timeouts, 408/409/429/5xx. */
export function isRetryableFailure(err: unknown): boolean {
  if (err instanceof TinkerConnectionError) return true;
  return err instanceof TinkerApiError && !(err instanceof TinkerSessionLostError) && isRetryableStatus(err.status, err.body);
}

export class TinkerCore {
  private session?: Promise<TinkerSession>;
  private heartbeat?: NodeJS.Timeout;
  private heartbeatFailingSince?: number;
  private heartbeatWarned = false;
  private modelSeq = 0;
  private samplingSessionSeq = 0;
  /** when the first 402 of the current billing pause came (undefined: not paused) */
  private billingPausedSince?: number;
  private jwt?: TinkerJwtAuth;
  /** counts sessions: a client made in one session is dead once it is lost */
  private generation = 0;
  /** counts forgotten sessions: a 404 that answers a request sent before the last loss says nothing of the session now */
  private sessionEpoch = 0;

  constructor(
    readonly http: TinkerHttp,
    private readonly options: TinkerCoreOptions,
  ) {}

  nextModelSeqId(): number {
    return this.modelSeq++;
  }

  /** create_sampling_session and unnamed save_weights_for_sampler share this per-session counter */
  nextSamplingSessionSeqId(): number {
    return this.samplingSessionSeq++;
  }

  /** the session a training or sampling client is made in (see sessionOf) */
  get sessionGeneration(): number {
    return this.generation;
  }

  /**
   * The session of a client made in session `generation`; once that session is lost the client is too, and
   * its calls fail at once with TinkerSessionLostError instead of opening a session its model never lived in.
   */
  sessionOf(generation: number, what: string): Promise<TinkerSession> {
    if (generation !== this.generation || !this.session) {
      return Promise.reject(new TinkerSessionLostError(what, 404, '', 0, `the session this client was made in is gone; make a new client`));
    }
    return this.session;
  }

  /** JWTs fetched from auth/token so far (0 when the server does not use them) */
  get jwtsFetched(): number {
    return this.jwt?.fetched ?? 0;
  }

  /** POST to `/api/v1/<name>` and parse the answer with `schema`. */
  async post<T>(name: string, body: unknown, schema: ZodType<T, ZodTypeDef, unknown>, extra: Partial<TinkerHttpRequest> = {}): Promise<T> {
    const path = `${TINKER_API_PREFIX}/${name}`;
    const res = await this.request({ method: 'POST', path, body, ...extra });
    return this.parse(`POST ${path}`, res.status, res.body, schema);
  }

  /** One HTTP call; a 404 on a call that names this session or one of its models or samplers means it is gone. */
  async request(req: TinkerHttpRequest): Promise<TinkerHttpResponse> {
    const epoch = this.sessionEpoch;
    try {
      return await this.http.request(req);
    } catch (err) {
      if (err instanceof TinkerApiError && err.status === 404 && SESSION_SCOPED.has(req.path.slice(TINKER_API_PREFIX.length + 1))) {
        // only a request of the session now in use forgets it: a late 404 of one sent before the loss (calls in
        // flight at once all meet it) must not end the session opened since
        if (epoch === this.sessionEpoch) this.forgetSession();
        throw new TinkerSessionLostError(err.endpoint, err.status, err.body, err.attempts, `the server no longer knows this session or its model/sampler (${err.message})`);
      }
      throw err;
    }
  }

  parse<T>(endpoint: string, status: number, body: unknown, schema: ZodType<T, ZodTypeDef, unknown>): T {
    const parsed = schema.safeParse(body);
    if (parsed.success) return parsed.data;
    const text = this.http.redact(JSON.stringify(body) ?? 'undefined');
    throw new TinkerApiError(endpoint, status, text.slice(0, 1000), 1, `unexpected answer (${summarizeZodIssues(parsed.error)})`);
  }

  /** The session, created on first use: client/config, auth/token if asked, create_session, then a heartbeat every 10 s. */
  ensureSession(): Promise<TinkerSession> {
    if (!this.session) {
      this.session = this.startSession();
      this.session.catch(() => {
        this.session = undefined;
      });
    }
    return this.session;
  }

  private forgetSession(): void {
    this.sessionEpoch++;
    if (this.heartbeat) clearInterval(this.heartbeat);
    this.heartbeat = undefined;
    this.session = undefined;
  }

  private async startSession(): Promise<TinkerSession> {
    const config = await this.withRetries('client/config', () => this.post('client/config', { sdk_version: TINKER_WIRE_SDK_VERSION }, clientConfigResponseSchema, { useApiKey: true }));
    if (config.pjwt_auth_enabled && !this.jwt) {
      const jwt = new TinkerJwtAuth({
        fetchJwt: async () => (await this.post('auth/token', {}, authTokenResponseSchema, { useApiKey: true })).jwt,
        refreshBeforeExpiryMs: this.options.timing.jwtRefreshBeforeExpiryMs,
        onRefreshError: (err) => this.options.logger.warn(`JWT refresh failed: ${err instanceof Error ? err.message : String(err)}`),
      });
      await jwt.current();
      this.jwt = jwt;
      this.http.useCredential(() => jwt.current());
    }
    const created = await this.withRetries('create_session', () =>
      this.post('create_session', { tags: this.options.tags, user_metadata: {}, sdk_version: TINKER_WIRE_SDK_VERSION, type: 'create_session' }, createSessionResponseSchema),
    );
    for (const message of [created.warning_message, created.error_message]) {
      if (message) this.options.logger.warn(`create_session: ${message}`);
    }
    this.samplingSessionSeq = 0;
    this.modelSeq = 0;
    this.generation++;
    this.startHeartbeat(created.session_id);
    return {
      sessionId: created.session_id,
      maxChunkLen: config.fwdbwd_max_chunk_len ?? 1024,
      maxChunkBytes: config.fwdbwd_max_chunk_bytes_count ?? 5_000_000,
      compressForwardBackward: config.proto_compress_fwdbwd ?? false,
      billingMaxPauseMs: (config.billing_exception_max_pause_duration_sec ?? 3600) * 1000,
    };
  }

  private startHeartbeat(sessionId: string): void {
    if (this.http.closed) return;
    this.heartbeat = setInterval(() => {
      this.request({
        method: 'POST',
        path: `${TINKER_API_PREFIX}/session_heartbeat`,
        body: { session_id: sessionId, type: 'session_heartbeat' },
        retries: 0,
        timeoutMs: 10_000,
      }).then(
        () => {
          this.heartbeatFailingSince = undefined;
          this.heartbeatWarned = false;
        },
        (err: unknown) => {
          if (this.http.closed) return;
          if (err instanceof TinkerSessionLostError) {
            this.options.logger.warn('the server no longer knows this session; the next call starts a new one');
            return;
          }
          const now = Date.now();
          this.heartbeatFailingSince ??= now;
          if (!this.heartbeatWarned && now - this.heartbeatFailingSince >= HEARTBEAT_WARN_AFTER_MS) {
            this.heartbeatWarned = true;
            const why = err instanceof Error ? err.message : String(err);
            this.options.logger.warn(`session heartbeats have failed for 2 minutes; the server may end the session (${why})`);
          }
        },
      );
    }, this.options.heartbeatIntervalMs);
    this.heartbeat.unref();
  }

  /**
   * The SDK's retry handler: `call` again (same body, same seq_id, a new idempotency key) while it fails with a
   * retryable error (429, 5xx, 408, 409, no answer), without a count limit, until it has made no progress for the
   * stuck timeout (then TinkerStuckError); a progress line every waitReportEveryMs; while the server answers 402
   * (billing), pause and retry for up to the billing pause limit.
   */
  async withRetries<T>(what: string, call: () => Promise<T>): Promise<T> {
    const waiting = this.waitClock(what);
    for (let retry = 0; ; ) {
      try {
        const result = await call();
        this.billingPausedSince = undefined;
        waiting.done();
        return result;
      } catch (err) {
        if (this.http.closed) throw err;
        if (err instanceof TinkerApiError && err.status === 402) {
          await this.pauseForBilling(what, err);
          continue;
        }
        if (!isRetryableFailure(err)) throw err;
        await this.backOff(retry++, waiting.failed(err), what);
      }
    }
  }

  /** The application-level back-off before retry `retry` (1 s doubling to 30 s), never past `leftMs` (the stuck timeout). */
  backOff(retry: number, leftMs: number, what: string): Promise<void> {
    const { appRetryBaseDelayMs, appRetryMaxDelayMs } = this.options.timing;
    return this.http.sleep(Math.max(0, Math.min(doublingDelayMs(retry, appRetryBaseDelayMs, appRetryMaxDelayMs), leftMs)), what);
  }

  /**
   * The clock of one call's failures in a row: `failed` logs a progress line every waitReportEveryMs and returns
   * the time left before the stuck timeout, throwing TinkerStuckError once it is spent; `done` ends the wait (and
   * says so, when a progress line was logged).
   */
  waitClock(what: string): { failed(err: unknown): number; done(): void } {
    const { stuckTimeoutMs, waitReportEveryMs } = this.options.timing;
    let since: number | undefined;
    let reported = 0;
    const describe = (err: unknown): string =>
      err instanceof TinkerApiError ? `HTTP ${err.status}` : err instanceof TinkerConnectionError ? (err.timedOut ? 'no answer in time' : 'no connection') : err instanceof Error ? err.message.split('\n')[0] : String(err);
    return {
      failed: (err) => {
        const now = Date.now();
        const first = since === undefined;
        since ??= now;
        const waited = now - since;
        // a timeout of 0 retries nothing: the failure itself is the answer
        if (waited >= stuckTimeoutMs) throw first ? err : new TinkerStuckError(what, waited, describe(err));
        if (waited >= (reported + 1) * waitReportEveryMs) {
          reported = Math.floor(waited / waitReportEveryMs);
          this.options.logger.warn(`Tinker: ${describe(err)} on ${what} for ${formatWait(waited)}, retrying (the run stops at the stuck timeout, ${formatWait(stuckTimeoutMs)}; rx run --resume continues it)`);
        }
        return stuckTimeoutMs - waited;
      },
      done: () => {
        if (since !== undefined && reported > 0) this.options.logger.warn(`Tinker: ${what} went through after ${formatWait(Date.now() - since)} of retries`);
        since = undefined;
        reported = 0;
      },
    };
  }

  /** A 402 (billing): waits billingPauseMs, or throws once the pause has lasted longer than the server's limit. */
  private async pauseForBilling(what: string, err: TinkerApiError): Promise<void> {
    const now = Date.now();
    const first = this.billingPausedSince === undefined;
    this.billingPausedSince ??= now;
    const limit = (await this.session?.catch(() => undefined))?.billingMaxPauseMs ?? 3_600_000;
    if (now - this.billingPausedSince > limit) {
      throw new TinkerError(`Tinker ${what}: paused by billing (HTTP 402) for ${now - this.billingPausedSince} ms, longer than ${limit} ms: ${err.message}`);
    }
    if (first) this.options.logger.warn(`${what}: paused by billing (HTTP 402); retrying every ${this.options.timing.billingPauseMs} ms`);
    await this.http.sleep(this.options.timing.billingPauseMs, what);
  }

  /** Submits a work request (answered with a future), with the application-level retries, and waits for its result. */
  async submitAndAwait<T>(
    name: string,
    body: unknown,
    requestType: TinkerRequestType,
    schema: ZodType<T, ZodTypeDef, unknown>,
    extra: Partial<TinkerHttpRequest> = {},
  ): Promise<T> {
    const future = await this.submit(name, body, extra);
    return this.awaitFuture(name, future, requestType, schema);
  }

  submit(name: string, body: unknown, extra: Partial<TinkerHttpRequest> = {}): Promise<UntypedApiFuture> {
    return this.withRetries(name, () => this.post(name, body, untypedApiFutureSchema, extra));
  }

  /**
   * Polls retrieve_future until the result of `future` is there, as the SDK: pending (try_again, 408) re-polls
   * at once, 5xx after a short delay, 429 and lost connections back off (1 s .. 30 s), 402 pauses, a bare 400 is
   * retried three times; 410 (expired), a failed request and other 4xx throw, and so does the deadline.
   */
  async awaitFuture<T>(name: string, future: UntypedApiFuture, requestType: TinkerRequestType, schema: ZodType<T, ZodTypeDef, unknown>): Promise<T> {
    const endpoint = `POST ${TINKER_API_PREFIX}/${name}`;
    const path = `${TINKER_API_PREFIX}/retrieve_future`;
    const deadline = Date.now() + this.options.futureTimeoutMs;
    const protobuf = requestType === 'Sample' || requestType === 'ForwardBackward' || requestType === 'Forward';
    const timing = this.options.timing;
    let quickPendings = 0;
    let backoffs = 0;
    let badRequests = 0;
    const waiting = this.waitClock(`${name} (result)`);
    for (let iteration = 0; ; iteration++) {
      if (Date.now() >= deadline) {
        throw new TinkerError(`Tinker ${endpoint}: no result for request ${future.request_id} within ${this.options.futureTimeoutMs} ms`);
      }
      const started = Date.now();
      let res: TinkerHttpResponse;
      try {
        res = await this.request({
          method: 'POST',
          path,
          body: { request_id: future.request_id, allow_metadata_only: false },
          timeoutMs: this.options.pollTimeoutMs,
          retries: 0,
          headers: {
            'X-Tinker-Request-Type': requestType,
            'X-Tinker-Request-Iteration': String(iteration),
            ...(protobuf ? { Accept: PROTOBUF_CONTENT_TYPE } : {}),
          },
          passStatuses: [408, 410],
        });
      } catch (err) {
        if (this.http.closed) throw err;
        if (err instanceof TinkerApiError && err.status === 402) {
          await this.pauseForBilling(name, err);
          continue;
        }
        if (err instanceof TinkerConnectionError || (err instanceof TinkerApiError && err.status === 429)) {
          const left = waiting.failed(err);
          await this.http.sleep(Math.min(left, doublingDelayMs(backoffs++, timing.pollBackoffBaseMs, timing.pollBackoffMaxMs)), endpoint);
          continue;
        }
        if (err instanceof TinkerApiError && err.status >= 500) {
          const left = waiting.failed(err);
          await this.http.sleep(Math.min(left, timing.pollRetryDelayMs), endpoint);
          continue;
        }
        if (err instanceof TinkerApiError && err.status === 400 && badRequests < MAX_BAD_REQUEST_POLL_RETRIES) {
          badRequests++;
          continue;
        }
        throw err;
      }
      backoffs = 0;
      waiting.done();
      this.billingPausedSince = undefined;
      if (res.status === 410) {
        throw new TinkerApiError(endpoint, 410, JSON.stringify(res.body ?? null).slice(0, 1000), 1, `the future ${future.request_id} expired on the server`);
      }
      if (res.bytes) {
        if (!res.contentType.includes(PROTOBUF_CONTENT_TYPE)) {
          throw new TinkerApiError(endpoint, res.status, `(${res.bytes.length} bytes of ${res.contentType})`, 1, 'the result is neither JSON nor protobuf');
        }
        const decoded = requestType === 'Sample' ? decodeSampleResponse(res.bytes) : decodeForwardBackwardOutput(res.bytes);
        return this.parse(endpoint, res.status, decoded, schema);
      }
      const failed = requestFailedResponseSchema.safeParse(res.body);
      if (failed.success) {
        throw new TinkerRequestFailedError(endpoint, future.request_id, failed.data.category, this.http.redact(failed.data.error));
      }
      const pending = res.status === 408 || tryAgainResponseSchema.safeParse(res.body).success || isCompleteMetadata(res.body);
      if (!pending) return this.parse(endpoint, res.status, res.body, schema);
      // The server long-polls; if it answers "pending" at once, back off instead of spinning (10 ms … 1 s).
      if (Date.now() - started < 50) {
        quickPendings++;
        await this.http.sleep(Math.min(1000, 10 * 2 ** Math.min(quickPendings, 7)), endpoint);
      } else {
        quickPendings = 0;
      }
    }
  }

  close(): void {
    if (this.heartbeat) clearInterval(this.heartbeat);
    this.heartbeat = undefined;
    this.http.close();
  }
}

/** Calls that name this client's session, or a model or sampler of it: a 404 there means it is gone. */
const SESSION_SCOPED = new Set([
  'session_heartbeat',
  'create_model',
  'create_sampling_session',
  'forward_backward',
  'forward',
  'optim_step',
  'save_weights',
  'load_weights',
  'save_weights_for_sampler',
  'asample',
  'get_info',
]);

function isCompleteMetadata(body: unknown): boolean {
  return !!body && typeof body === 'object' && (body as { status?: unknown }).status === 'complete_metadata';
}
