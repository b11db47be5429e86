// An HTTP proxy for protocol tests that sits in front of a real server on 127.0.0.1 and, by rule, answers a
// path with a status of its own, drops the connection (before or after forwarding) or holds the request
// without answering, for a number of requests or for a while. Everything else is forwarded unchanged.
// Optionally it is a JWT gateway, as the Tinker service is when it sets pjwt_auth_enabled: it says so in
// client/config, trades the API key for a short-lived JWT at auth/token, and lets a request through only with a
// JWT it issued that has not expired (401 otherwise), putting the API key back for the server behind it.
// close() ends every socket it holds.
import { createHmac, randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

export type FaultAction =
  /** answer with this status and body instead of forwarding */
  | { kind: 'status'; status: number; body?: string; headers?: Record<string, string> }
  /** destroy the client connection without forwarding */
  | { kind: 'reset-before' }
  /** forward, let the server act, then destroy the client connection instead of relaying the answer */
  | { kind: 'reset-after' }
  /** never answer (until close) */
  | { kind: 'hang' };

export interface FaultRule {
  /** request path below the host, e.g. /api/v1/forward_backward */
  path: string;
  /** how many matching requests the rule applies to (then it is spent); Infinity with forMs for a time window */
  times: number;
  /** the rule applies only this long after the first request it hits (a burst) */
  forMs?: number;
  action: FaultAction;
}

export interface JwtGatewayOptions {
  /** the key clients must trade at auth/token (and that the server behind expects) */
  apiKey: string;
  /** lifetime of each JWT issued */
  lifetimeMs: number;
}

export interface FaultProxyOptions {
  jwt?: JwtGatewayOptions;
}

export interface FaultProxy {
  url: string;
  /** requests seen, by path, including faulted ones */
  hits: Map<string, number>;
  /** what the proxy answered itself (injected faults and gateway refusals), by status */
  faulted: Map<number, number>;
  /** JWTs issued at auth/token */
  jwtsIssued: number;
  inject(rule: FaultRule): void;
  close(): Promise<void>;
}

interface ActiveRule extends FaultRule {
  /** set at the first request the rule hits */
  until?: number;
}

export async function startFaultProxy(targetUrl: string, options: FaultProxyOptions = {}): Promise<FaultProxy> {
  const target = new URL(targetUrl);
  const rules: ActiveRule[] = [];
  const hits = new Map<string, number>();
  const faulted = new Map<number, number>();
  const jwtSecret = randomBytes(32);
  let jwtsIssued = 0;
  const answer = (res: http.ServerResponse, status: number, body: string, headers: Record<string, string> = {}): void => {
    faulted.set(status, (faulted.get(status) ?? 0) + 1);
    res.writeHead(status, { 'content-type': 'application/json', ...headers });
    res.end(body);
  };
  const issueJwt = (lifetimeMs: number): string => {
    const b64 = (o: unknown): string => Buffer.from(JSON.stringify(o)).toString('base64url');
    const head = `${b64({ alg: 'HS256', typ: 'JWT' })}.${b64({ exp: (Date.now() + lifetimeMs) / 1000, n: jwtsIssued++ })}`;
    return `${head}.${createHmac('sha256', jwtSecret).update(head).digest('base64url')}`;
  };
  const jwtValid = (token: string): boolean => {
    const [h, p, sig] = token.split('.');
    if (!h || !p || !sig || createHmac('sha256', jwtSecret).update(`${h}.${p}`).digest('base64url') !== sig) return false;
    const { exp } = JSON.parse(Buffer.from(p, 'base64url').toString('utf8')) as { exp: number };
    return exp * 1000 > Date.now();
  };
  const sockets = new Set<Socket>();
  const agent = new http.Agent({ keepAlive: false });

  const server = http.createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0]!;
    hits.set(path, (hits.get(path) ?? 0) + 1);
    const now = Date.now();
    const rule = rules.find((r) => r.path === path && r.times > 0 && (r.until === undefined || now < r.until));
    if (rule) {
      rule.times--;
      if (rule.until === undefined && rule.forMs !== undefined) rule.until = now + rule.forMs;
    }
    const action = rule?.action;
    if (action?.kind === 'status') {
      req.resume();
      answer(res, action.status, action.body ?? '', action.headers);
      return;
    }
    const gateway = options.jwt;
    if (gateway && path.startsWith('/api/') && path !== '/api/v1/healthz') {
      const presented = req.headers['x-api-key'];
      if (path === '/api/v1/auth/token' || path === '/api/v1/client/config') {
        // the raw key is what these take (the SDK sends it before it has a JWT)
        if (presented !== gateway.apiKey) {
          req.resume();
          answer(res, 401, JSON.stringify({ detail: 'Invalid API key' }));
          return;
        }
        if (path === '/api/v1/auth/token') {
          req.resume();
          res.writeHead(200, { 'content-type': 'application/json' });
          res.end(JSON.stringify({ jwt: issueJwt(gateway.lifetimeMs) }));
          return;
        }
      } else if (typeof presented !== 'string' || !jwtValid(presented)) {
        req.resume();
        answer(res, 401, JSON.stringify({ detail: 'Invalid JWT' }));
        return;
      } else {
        req.headers['x-api-key'] = gateway.apiKey;
      }
    }
    if (action?.kind === 'reset-before') {
      req.resume();
      req.socket.destroy();
      return;
    }
    if (action?.kind === 'hang') {
      req.resume();
      return;
    }
    const upstream = http.request(
      { host: target.hostname, port: target.port, method: req.method, path: req.url, headers: req.headers, agent },
      (up) => {
        if (action?.kind === 'reset-after') {
          up.resume();
          up.on('end', () => req.socket.destroy());
          return;
        }
        if (gateway && path === '/api/v1/client/config' && up.statusCode === 200) {
          // the gateway tells the client to trade its key for a JWT
          const parts: Buffer[] = [];
          up.on('data', (d: Buffer) => parts.push(d));
          up.on('end', () => {
            const config = { ...(JSON.parse(Buffer.concat(parts).toString('utf8')) as object), pjwt_auth_enabled: true };
            res.writeHead(200, { 'content-type': 'application/json' });
            res.end(JSON.stringify(config));
          });
          return;
        }
        res.writeHead(up.statusCode ?? 502, up.headers);
        up.pipe(res);
      },
    );
    upstream.on('error', () => req.socket.destroy());
    req.pipe(upstream);
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}`,
    hits,
    faulted,
    get jwtsIssued() {
      return jwtsIssued;
    },
    inject: (rule) => rules.push({ ...rule }),
    close: async () => {
      for (const s of sockets) s.destroy();
      agent.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** A port on 127.0.0.1 that nothing listens on (bound once, then released). */
export async function unusedPort(): Promise<number> {
  const server = http.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}
