// The JWT the SDK trades its API key for when client/config says `pjwt_auth_enabled`: `POST auth/token {}`
// with the key answers `{jwt}`, which then goes in the same X-API-Key header. A token is refreshed before it
// expires (the SDK: 5 min before `exp`), once at a time; if a refresh fails while the old token still holds,
// the old one is used. The signature is not checked (the token came from the server over TLS).

export interface TinkerJwtOptions {
  /** exchanges the API key for a new JWT (auth/token) */
  fetchJwt: () => Promise<string>;
  /** refresh when the token expires within this (default 5 min, as the SDK) */
  refreshBeforeExpiryMs: number;
  now?: () => number;
  onRefreshError?: (err: unknown) => void;
}

/** The `exp` claim of a JWT in ms since the epoch, or undefined when it has none or is not a JWT. */
export function jwtExpiryMs(jwt: string): number | undefined {
  const payload = jwt.split('.')[1];
  if (!payload) return undefined;
  try {
    const claims = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as { exp?: unknown };
    return typeof claims.exp === 'number' && Number.isFinite(claims.exp) ? claims.exp * 1000 : undefined;
  } catch {
    return undefined;
  }
}

export class TinkerJwtAuth {
  private token?: string;
  private refreshing?: Promise<string>;
  /** how many tokens were fetched */
  fetched = 0;

  constructor(private readonly options: TinkerJwtOptions) {}

  /** The token to send now: the cached one, or a fresh one when it expires within the refresh margin. */
  async current(): Promise<string> {
    const now = (this.options.now ?? Date.now)();
    const token = this.token;
    if (token !== undefined) {
      // a token without exp is used until the server refuses it
      const exp = jwtExpiryMs(token) ?? Number.POSITIVE_INFINITY;
      if (exp - now > this.options.refreshBeforeExpiryMs) return token;
    }
    this.refreshing ??= this.options
      .fetchJwt()
      .then((fresh) => {
        this.token = fresh;
        this.fetched++;
        return fresh;
      })
      .finally(() => {
        this.refreshing = undefined;
      });
    try {
      return await this.refreshing;
    } catch (err) {
      this.options.onRefreshError?.(err);
      if (token !== undefined && (jwtExpiryMs(token) ?? Number.POSITIVE_INFINITY) > now) return token;
      throw err;
    }
  }
}
