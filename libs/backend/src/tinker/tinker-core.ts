// What the Tinker training and sampling clients share: the HTTP core, the session (client/config,
// create_session, heartbeat every 10 s), and the futures loop on retrieve_future (the server long-polls;
// `try_again` and HTTP 408 mean pending, `{error, category}` a failed request, 410 an expired future).
import type { ZodType, ZodTypeDef } from 'zod';
import { TinkerApiError, TinkerError, TinkerRequestFailedError } from './tinker-errors';
import type { TinkerHttp, TinkerHttpRequest } from './tinker-http';
import {
  TINKER_API_PREFIX,
  TINKER_WIRE_SDK_VERSION,
  clientConfigResponseSchema,
  createSessionResponseSchema,
  requestFailedResponseSchema,
  tryAgainResponseSchema,
  untypedApiFutureSchema,
  type TinkerRequestType,
  type UntypedApiFuture,
} from './tinker-wire.schema';

export interface TinkerLogger {
  warn(message: string): void;
}

export interface TinkerCoreOptions {
  pollTimeoutMs: number;
  futureTimeoutMs: number;
  heartbeatIntervalMs: number;
  tags: string[];
  logger: TinkerLogger;
}

export interface TinkerSession {
  sessionId: string;
  /** forward_backward chunking limits announced by client/config (SDK defaults when absent) */
  maxChunkLen: number;
  maxChunkBytes: number;
}

/** How long a heartbeat may keep failing before one warning is logged (the SDK's 2 minutes). */
const HEARTBEAT_WARN_AFTER_MS = 120_000;

function summarizeZodIssues(error: { issues: { path: (string | number)[]; message: string }[] }): string {
  return error.issues
    .slice(0, 3)
    .map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`)
    .join('; ');
}

export class TinkerCore {
  private session?: Promise<TinkerSession>;
  private heartbeat?: NodeJS.Timeout;
  private heartbeatFailingSince?: number;
  private heartbeatWarned = false;
  private modelSeq = 0;

  constructor(
    readonly http: TinkerHttp,
    private readonly options: TinkerCoreOptions,
  ) {}

  nextModelSeqId(): number {
    return this.modelSeq++;
  }

  /** POST to `/api/v1/<name>` and parse the answer with `schema`. */
  async post<T>(name: string, body: unknown, schema: ZodType<T, ZodTypeDef, unknown>, extra: Partial<TinkerHttpRequest> = {}): Promise<T> {
    const path = `${TINKER_API_PREFIX}/${name}`;
    const res = await this.http.request({ method: 'POST', path, body, ...extra });
    return this.parse(`POST ${path}`, res.status, res.body, schema);
  }

  parse<T>(endpoint: string, status: number, body: unknown, schema: ZodType<T, ZodTypeDef, unknown>): T {
    const parsed = schema.safeParse(body);
    if (parsed.success) return parsed.data;
    const text = this.http.redact(JSON.stringify(body) ?? 'undefined');
    throw new TinkerApiError(endpoint, status, text.slice(0, 1000), 1, `unexpected answer (${summarizeZodIssues(parsed.error)})`);
  }

  /** The session, created on first use: client/config, create_session, then a heartbeat every 10 s. */
  ensureSession(): Promise<TinkerSession> {
    if (!this.session) {
      this.session = this.startSession();
      this.session.catch(() => {
        this.session = undefined;
      });
    }
    return this.session;
  }

  private async startSession(): Promise<TinkerSession> {
    const config = await this.post('client/config', { sdk_version: TINKER_WIRE_SDK_VERSION }, clientConfigResponseSchema);
    if (config.pjwt_auth_enabled) {
      this.options.logger.warn('the server enables JWT exchange (pjwt_auth_enabled); this client keeps sending the API key');
    }
    const created = await this.post(
      'create_session',
      { tags: this.options.tags, user_metadata: {}, sdk_version: TINKER_WIRE_SDK_VERSION, type: 'create_session' },
      createSessionResponseSchema,
    );
    for (const message of [created.warning_message, created.error_message]) {
      if (message) this.options.logger.warn(`create_session: ${message}`);
    }
    this.startHeartbeat(created.session_id);
    return {
      sessionId: created.session_id,
      maxChunkLen: config.fwdbwd_max_chunk_len ?? 1024,
      maxChunkBytes: config.fwdbwd_max_chunk_bytes_count ?? 5_000_000,
    };
  }

  private startHeartbeat(sessionId: string): void {
    if (this.http.closed) return;
    this.heartbeat = setInterval(() => {
      this.http
        .request({
          method: 'POST',
          path: `${TINKER_API_PREFIX}/session_heartbeat`,
          body: { session_id: sessionId, type: 'session_heartbeat' },
          retries: 0,
          timeoutMs: 10_000,
        })
        .then(
          () => {
            this.heartbeatFailingSince = undefined;
            this.heartbeatWarned = false;
          },
          (err: unknown) => {
            if (this.http.closed) return;
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

  /** Submits a work request (answered with a future) and waits for its result. */
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
    return this.post(name, body, untypedApiFutureSchema, extra);
  }

  /** Polls retrieve_future until the result of `future` is there; throws on failure, expiry or deadline. */
  async awaitFuture<T>(name: string, future: UntypedApiFuture, requestType: TinkerRequestType, schema: ZodType<T, ZodTypeDef, unknown>): Promise<T> {
    const endpoint = `POST ${TINKER_API_PREFIX}/${name}`;
    const path = `${TINKER_API_PREFIX}/retrieve_future`;
    const deadline = Date.now() + this.options.futureTimeoutMs;
    let quickPendings = 0;
    for (let iteration = 0; ; iteration++) {
      const started = Date.now();
      const res = await this.http.request({
        method: 'POST',
        path,
        body: { request_id: future.request_id, allow_metadata_only: false },
        timeoutMs: this.options.pollTimeoutMs,
        headers: { 'X-Tinker-Request-Type': requestType, 'X-Tinker-Request-Iteration': String(iteration) },
        passStatuses: [408, 410],
      });
      if (res.status === 410) {
        throw new TinkerApiError(endpoint, 410, JSON.stringify(res.body ?? null).slice(0, 1000), 1, `the future ${future.request_id} expired on the server`);
      }
      const failed = requestFailedResponseSchema.safeParse(res.body);
      if (failed.success) {
        throw new TinkerRequestFailedError(endpoint, future.request_id, failed.data.category, this.http.redact(failed.data.error));
      }
      const pending = res.status === 408 || tryAgainResponseSchema.safeParse(res.body).success || isCompleteMetadata(res.body);
      if (!pending) return this.parse(endpoint, res.status, res.body, schema);
      if (Date.now() >= deadline) {
        throw new TinkerError(`Tinker ${endpoint}: no result for request ${future.request_id} within ${this.options.futureTimeoutMs} ms`);
      }
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

function isCompleteMetadata(body: unknown): boolean {
  return !!body && typeof body === 'object' && (body as { status?: unknown }).status === 'complete_metadata';
}
