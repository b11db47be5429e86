// HTTP core of the Tinker client: JSON or protobuf over fetch with `X-API-Key` (the API key, or the JWT it was
// exchanged for), an idempotency key per call (kept across its retries), a per-attempt timeout, and bounded
// retries with exponential back-off and jitter on 5xx, 408, 409, 429, an empty 400 (proxy reset), connection loss
// and timeouts, as the SDK's HTTP layer. Credentials are held in private fields and redacted from any server
// text quoted in an error.
import { randomUUID } from 'node:crypto';
import { TinkerApiError, TinkerClosedError, TinkerConnectionError } from './tinker-errors';
import { backoffDelayMs, isRetryableStatus, retryAfterMs, type RetryPolicy } from './tinker-retry';

export interface TinkerRetryEvent {
  /** e.g. `POST /api/v1/forward_backward` */
  endpoint: string;
  /** the attempt that failed (1-based) */
  attempt: number;
  delayMs: number;
  /** `HTTP 503`, `connection refused (ECONNREFUSED)`, `no answer within 200 ms`, … */
  reason: string;
}

export interface TinkerHttpOptions {
  baseUrl: string;
  apiKey: string;
  timeoutMs: number;
  retry: RetryPolicy;
  userAgent: string;
  onRetry?: (event: TinkerRetryEvent) => void;
}

/** A body sent as bytes (protobuf), optionally compressed. */
export interface TinkerBinaryBody {
  bytes: Uint8Array;
  contentType: string;
  contentEncoding?: string;
}

export interface TinkerHttpRequest {
  method: 'GET' | 'POST';
  /** path below the base URL, starting with `/api/v1/` */
  path: string;
  /** sent as JSON, or as bytes when a TinkerBinaryBody */
  body?: unknown;
  binary?: TinkerBinaryBody;
  /** send the API key itself, not the JWT (auth/token) */
  useApiKey?: boolean;
  timeoutMs?: number;
  /** overrides the policy's retry count for this call (heartbeats and pings use 0) */
  retries?: number;
  headers?: Record<string, string>;
  /** non-2xx statuses handed back to the caller instead of being retried or thrown (408/410 on futures) */
  passStatuses?: readonly number[];
  /** 'manual': a redirect is answered to the caller (its Location read from `headers`), not followed */
  redirect?: 'manual';
}

export interface TinkerHttpResponse {
  status: number;
  /** the parsed JSON answer (undefined for an empty or a binary one) */
  body: unknown;
  /** the answer's bytes when its Content-Type is not JSON (protobuf results) */
  bytes?: Uint8Array;
  contentType: string;
  /** the answer's headers (a redirect's Location) */
  headers?: Headers;
}

const BODY_LIMIT = 1000;
const DETAIL_LIMIT = 300;

function truncate(text: string, limit: number): string {
  return text.length <= limit ? text : `${text.slice(0, limit)}… (${text.length} chars)`;
}

/** The server's own message in an error body: `error`, `detail` or `message` of a JSON object, else the text. */
function serverDetail(text: string): string {
  try {
    const parsed: unknown = JSON.parse(text);
    if (parsed && typeof parsed === 'object') {
      const obj = parsed as Record<string, unknown>;
      for (const key of ['error', 'detail', 'message']) {
        const v = obj[key];
        if (typeof v === 'string' && v) return truncate(v, DETAIL_LIMIT);
        if (v !== undefined && v !== null) return truncate(JSON.stringify(v), DETAIL_LIMIT);
      }
    }
  } catch {
    // not JSON: quote the text
  }
  return text.trim() ? truncate(text.trim(), DETAIL_LIMIT) : '(empty body)';
}

function networkReason(err: unknown): string {
  const cause = (err as { cause?: { code?: unknown; message?: unknown } } | undefined)?.cause;
  const code = typeof cause?.code === 'string' ? cause.code : undefined;
  const known: Record<string, string> = {
    ECONNREFUSED: 'connection refused',
    ECONNRESET: 'connection reset',
    ENOTFOUND: 'host not found',
    EAI_AGAIN: 'DNS lookup failed',
    EPIPE: 'connection closed',
    UND_ERR_SOCKET: 'connection closed by the server',
    UND_ERR_CONNECT_TIMEOUT: 'connect timeout',
  };
  if (code) return `${known[code] ?? 'network error'} (${code})`;
  if (typeof cause?.message === 'string' && cause.message) return `network error (${cause.message})`;
  return `network error (${err instanceof Error ? err.message : String(err)})`;
}

/** The origin (scheme://host:port) of a URL, without credentials, for error messages. */
function safeOrigin(url: string): string {
  try {
    return new URL(url).origin;
  } catch {
    return '(invalid URL)';
  }
}

type Attempt =
  | { kind: 'response'; status: number; text: string; bytes?: Uint8Array; headers: Headers }
  | { kind: 'network'; reason: string; timedOut: boolean };

/** The credential sent in X-API-Key: the API key, or a JWT from auth/token (refreshed by its provider). */
export type TinkerCredentialProvider = () => Promise<string>;

export class TinkerHttp {
  readonly #apiKey: string;
  readonly #baseUrl: string;
  #credential?: TinkerCredentialProvider;
  /** credentials handed out so far (JWTs), redacted from quoted text like the key */
  readonly #secrets = new Set<string>();
  readonly #closed = new AbortController();
  /** what close() aborts: each call in flight and each back-off sleep (one entry each, not a listener each on one signal) */
  readonly #onClose = new Set<() => void>();
  private readonly options: Omit<TinkerHttpOptions, 'apiKey' | 'baseUrl'>;

  constructor(options: TinkerHttpOptions) {
    const { apiKey, baseUrl, ...rest } = options;
    this.#apiKey = apiKey;
    this.#baseUrl = baseUrl.replace(/\/+$/, '');
    this.options = rest;
  }

  get baseUrl(): string {
    return this.#baseUrl;
  }

  get closed(): boolean {
    return this.#closed.signal.aborted;
  }

  /** Aborts every call in flight (they reject with TinkerClosedError) and refuses new ones. */
  close(): void {
    this.#closed.abort();
    for (const abort of [...this.#onClose]) abort();
  }

  /** From now on, X-API-Key carries what `provider` gives (a JWT) instead of the API key. */
  useCredential(provider: TinkerCredentialProvider): void {
    this.#credential = async () => {
      const token = await provider();
      this.#secrets.add(token);
      return token;
    };
  }

  /** Replaces the API key and any JWT in text quoted from the server (in case it echoes the request). */
  redact(text: string): string {
    let out = text;
    for (const secret of [this.#apiKey, ...this.#secrets]) if (secret.length >= 4) out = out.split(secret).join('[redacted]');
    return out;
  }

  async request(req: TinkerHttpRequest): Promise<TinkerHttpResponse> {
    const endpoint = `${req.method} ${req.path}`;
    if (this.closed) throw new TinkerClosedError(`Tinker ${endpoint}: the client is closed`);
    const url = this.#baseUrl + req.path;
    const payload = req.binary ? req.binary.bytes : req.body === undefined ? undefined : JSON.stringify(req.body);
    const headers: Record<string, string> = {
      Accept: 'application/json',
      'User-Agent': this.options.userAgent,
      ...req.headers,
    };
    if (req.binary) {
      headers['Content-Type'] = req.binary.contentType;
      if (req.binary.contentEncoding) headers['Content-Encoding'] = req.binary.contentEncoding;
    } else if (payload !== undefined) {
      headers['Content-Type'] = 'application/json';
    }
    if (req.method !== 'GET') headers['X-Idempotency-Key'] = randomUUID();
    const timeoutMs = req.timeoutMs ?? this.options.timeoutMs;
    const maxAttempts = Math.max(0, req.retries ?? this.options.retry.retries) + 1;

    for (let attempt = 1; ; attempt++) {
      headers['X-API-Key'] = req.useApiKey || !this.#credential ? this.#apiKey : await this.#credential();
      const result = await this.attempt(url, req.method, headers, payload, timeoutMs, endpoint, req.redirect);
      let reason: string;
      let delayMs: number;
      if (result.kind === 'response') {
        const { status, text } = result;
        if ((status >= 200 && status < 300) || req.passStatuses?.includes(status)) {
          const contentType = result.headers.get('content-type') ?? '';
          if (result.bytes) return { status, body: undefined, bytes: result.bytes, contentType };
          if (status >= 300 && status < 400) return { status, body: undefined, contentType, headers: result.headers };
          return { status, body: this.parseJson(text, status, endpoint, attempt), contentType };
        }
        const shouldRetry = result.headers.get('x-should-retry');
        const retryable = shouldRetry === 'true' || (shouldRetry !== 'false' && isRetryableStatus(status, text));
        if (!retryable || attempt >= maxAttempts) {
          const quoted = this.redact(text);
          throw new TinkerApiError(endpoint, status, truncate(quoted, BODY_LIMIT), attempt, serverDetail(quoted));
        }
        reason = `HTTP ${status}`;
        delayMs = retryAfterMs(result.headers) ?? backoffDelayMs(attempt - 1, this.options.retry);
      } else {
        if (attempt >= maxAttempts) {
          throw new TinkerConnectionError(endpoint, attempt, `${result.reason} at ${safeOrigin(url)}`, result.timedOut);
        }
        reason = result.reason;
        delayMs = backoffDelayMs(attempt - 1, this.options.retry);
      }
      this.options.onRetry?.({ endpoint, attempt, delayMs, reason });
      await this.sleep(delayMs, endpoint);
    }
  }

  private parseJson(text: string, status: number, endpoint: string, attempt: number): unknown {
    if (text.trim() === '') return undefined;
    try {
      return JSON.parse(text);
    } catch {
      throw new TinkerApiError(endpoint, status, truncate(this.redact(text), BODY_LIMIT), attempt, 'the response is not JSON');
    }
  }

  private async attempt(
    url: string,
    method: string,
    headers: Record<string, string>,
    payload: string | Uint8Array | undefined,
    timeoutMs: number,
    endpoint: string,
    redirect?: 'manual',
  ): Promise<Attempt> {
    const controller = new AbortController();
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      controller.abort();
    }, timeoutMs);
    const onClose = (): void => controller.abort();
    this.#onClose.add(onClose);
    try {
      const res = await fetch(url, { method, headers, body: payload, signal: controller.signal, ...(redirect ? { redirect } : {}) });
      const type = res.headers.get('content-type') ?? '';
      if (res.ok && type !== '' && !type.includes('json') && !type.startsWith('text/')) {
        return { kind: 'response', status: res.status, text: '', bytes: new Uint8Array(await res.arrayBuffer()), headers: res.headers };
      }
      const text = await res.text();
      return { kind: 'response', status: res.status, text, headers: res.headers };
    } catch (err) {
      if (this.closed) throw new TinkerClosedError(`Tinker ${endpoint}: the client was closed during the call`);
      if (timedOut) return { kind: 'network', reason: `no answer within ${timeoutMs} ms`, timedOut: true };
      return { kind: 'network', reason: networkReason(err), timedOut: false };
    } finally {
      clearTimeout(timer);
      this.#onClose.delete(onClose);
    }
  }

  /** Waits `ms`, or rejects with TinkerClosedError as soon as the client is closed. */
  sleep(ms: number, endpoint: string): Promise<void> {
    return new Promise((resolve, reject) => {
      if (this.closed) return reject(new TinkerClosedError(`Tinker ${endpoint}: the client is closed`));
      const onClose = (): void => {
        clearTimeout(timer);
        reject(new TinkerClosedError(`Tinker ${endpoint}: the client was closed during the call`));
      };
      const timer = setTimeout(() => {
        this.#onClose.delete(onClose);
        resolve();
      }, ms);
      this.#onClose.add(onClose);
    });
  }
}
