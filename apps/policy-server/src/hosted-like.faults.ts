// Hosted-like faults at the HTTP edge (after the API key check and the body parsers): 429 storms and 5xx bursts
// from a given request on, every session lost once at a given request, the first poll of every n-th sample future
// answered 410 (expired), slow training steps. Requests are counted over /api/v1 routes but healthz, from the
// server's start. Each injected answer says it is injected (`hosted-like:`) and is logged once per fault.
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import type { HostedLikeFaults } from './hosted-like.config';

export interface HostedLikeHooks {
  /** forgets every session (and its models and samplers); returns how many there were */
  loseSessions(): number;
  log(line: string): void;
}

interface BurstState {
  startedAt?: number;
  answered: number;
  ended: boolean;
}

const SLOW_ROUTES = new Set(['/api/v1/forward_backward', '/api/v1/optim_step']);

export function hostedLikeFaultsMiddleware(faults: HostedLikeFaults, hooks: HostedLikeHooks): RequestHandler {
  let requests = 0;
  let sessionsLost = false;
  let sampleFutures = 0;
  const expired = new Set<string>();
  const seenSampleFutures = new Set<string>();
  const bursts = (faults.status_bursts ?? []).map((b) => ({ ...b, state: { answered: 0, ended: false } as BurstState }));

  return (req: Request, res: Response, next: NextFunction): void => {
    if (!req.path.startsWith('/api/v1/') || req.path === '/api/v1/healthz') return next();
    requests++;
    const now = Date.now();

    if (faults.lose_sessions_at_request !== undefined && !sessionsLost && requests >= faults.lose_sessions_at_request) {
      sessionsLost = true;
      hooks.log(`hosted-like: lost every session (${hooks.loseSessions()}) at request ${requests}`);
    }

    for (const b of bursts) {
      const s = b.state;
      if (s.ended || requests < b.after_requests) continue;
      if (s.startedAt === undefined) {
        s.startedAt = now;
        hooks.log(`hosted-like: HTTP ${b.status} ${b.duration_ms !== undefined ? `storm for ${b.duration_ms} ms` : `burst of ${b.count} answers`} from request ${requests}`);
      }
      const over = b.duration_ms !== undefined ? now - s.startedAt >= b.duration_ms : s.answered >= (b.count ?? 0);
      if (over) {
        s.ended = true;
        hooks.log(`hosted-like: HTTP ${b.status} ${b.duration_ms !== undefined ? 'storm' : 'burst'} over after ${s.answered} answers`);
        continue;
      }
      s.answered++;
      res.status(b.status).json({ error: `hosted-like: injected HTTP ${b.status}` });
      return;
    }

    if (faults.expire_every_nth_sample_future !== undefined && req.path === '/api/v1/retrieve_future' && req.get('x-tinker-request-type') === 'Sample') {
      const id = typeof (req.body as { request_id?: unknown } | undefined)?.request_id === 'string' ? (req.body as { request_id: string }).request_id : undefined;
      if (id !== undefined && !seenSampleFutures.has(id)) {
        seenSampleFutures.add(id);
        if (++sampleFutures % faults.expire_every_nth_sample_future === 0) expired.add(id);
      }
      if (id !== undefined && expired.has(id)) {
        res.status(410).json({ error: `hosted-like: the result of '${id}' has expired` });
        return;
      }
    }

    if (faults.slow_step_ms && SLOW_ROUTES.has(req.path)) {
      const timer = setTimeout(next, faults.slow_step_ms);
      res.on('close', () => clearTimeout(timer));
      return;
    }
    next();
  };
}
