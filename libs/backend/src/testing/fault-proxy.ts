// An HTTP proxy for protocol tests that sits in front of a real server on 127.0.0.1 and, by rule, answers a
// path with a status of its own, drops the connection (before or after forwarding) or holds the request
// without answering. Everything else is forwarded unchanged. close() ends every socket it holds.
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
  /** how many matching requests the rule applies to (then it is spent) */
  times: number;
  action: FaultAction;
}

export interface FaultProxy {
  url: string;
  /** requests seen, by path, including faulted ones */
  hits: Map<string, number>;
  inject(rule: FaultRule): void;
  close(): Promise<void>;
}

export async function startFaultProxy(targetUrl: string): Promise<FaultProxy> {
  const target = new URL(targetUrl);
  const rules: FaultRule[] = [];
  const hits = new Map<string, number>();
  const sockets = new Set<Socket>();
  const agent = new http.Agent({ keepAlive: false });

  const server = http.createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0]!;
    hits.set(path, (hits.get(path) ?? 0) + 1);
    const rule = rules.find((r) => r.path === path && r.times > 0);
    if (rule) rule.times--;
    const action = rule?.action;
    if (action?.kind === 'status') {
      req.resume();
      res.writeHead(action.status, { 'content-type': 'application/json', ...action.headers });
      res.end(action.body ?? '');
      return;
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
