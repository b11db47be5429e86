// Futures of the Tinker protocol: each work request gets a request id at once; retrieve_future long-polls
// until its result is there (or answers try_again). Finished results are kept for a TTL, then expire (410).
import type { RequestErrorCategory } from '@rx/backend';

export type FutureOutcome =
  | { status: 'pending' }
  | { status: 'done'; result: unknown }
  | { status: 'failed'; error: string; category: RequestErrorCategory }
  | { status: 'expired' }
  | { status: 'unknown' };

interface Entry {
  outcome: FutureOutcome;
  settledAt?: number;
  waiters: Set<() => void>;
  work: Promise<void>;
}

const ID_PREFIX = 'req_';

/** The category of a failure: errors with `category: 'user'` (caller mistakes) are 'user', others 'server'. */
export function errorCategory(err: unknown): RequestErrorCategory {
  return (err as { category?: unknown } | null)?.category === 'user' ? 'user' : 'server';
}

export class FutureStore {
  private readonly entries = new Map<string, Entry>();
  private counter = 0;
  private shuttingDown = false;
  private readonly sweeper: NodeJS.Timeout;

  constructor(
    private readonly ttlMs: number,
    private readonly onSettled: (outcome: 'done' | 'failed') => void = () => {},
  ) {
    this.sweeper = setInterval(() => this.sweep(), Math.min(ttlMs, 60_000));
    this.sweeper.unref();
  }

  /** Registers work whose result a client will poll for; returns the request id. */
  create(work: Promise<unknown>): string {
    const id = `${ID_PREFIX}${this.counter++}`;
    const entry: Entry = { outcome: { status: 'pending' }, waiters: new Set(), work: Promise.resolve() };
    entry.work = work.then(
      (result) => this.settle(entry, { status: 'done', result }),
      (err: unknown) =>
        this.settle(entry, { status: 'failed', error: err instanceof Error ? err.message : String(err), category: errorCategory(err) }),
    );
    this.entries.set(id, entry);
    return id;
  }

  private settle(entry: Entry, outcome: FutureOutcome): void {
    entry.outcome = outcome;
    entry.settledAt = Date.now();
    this.onSettled(outcome.status === 'done' ? 'done' : 'failed');
    for (const wake of entry.waiters) wake();
    entry.waiters.clear();
  }

  /** The outcome of `id`, waiting up to `timeoutMs` while it is pending (not at all once shutdown began). */
  async wait(id: string, timeoutMs: number): Promise<FutureOutcome> {
    const entry = this.entries.get(id);
    if (!entry) return { status: this.wasIssued(id) ? 'expired' : 'unknown' };
    if (entry.outcome.status !== 'pending' || this.shuttingDown || timeoutMs <= 0) return entry.outcome;
    await new Promise<void>((resolve) => {
      const wake = (): void => {
        clearTimeout(timer);
        entry.waiters.delete(wake);
        resolve();
      };
      const timer = setTimeout(wake, timeoutMs);
      entry.waiters.add(wake);
    });
    return entry.outcome;
  }

  private wasIssued(id: string): boolean {
    if (!id.startsWith(ID_PREFIX)) return false;
    const n = Number(id.slice(ID_PREFIX.length));
    return Number.isInteger(n) && n >= 0 && n < this.counter;
  }

  pendingCount(): number {
    let n = 0;
    for (const e of this.entries.values()) if (e.outcome.status === 'pending') n++;
    return n;
  }

  private sweep(now = Date.now()): void {
    for (const [id, e] of this.entries) {
      if (e.settledAt !== undefined && now - e.settledAt > this.ttlMs) this.entries.delete(id);
    }
  }

  /** Answers every waiting long-poll now (they get try_again) and stops holding new ones. */
  beginShutdown(): void {
    this.shuttingDown = true;
    for (const e of this.entries.values()) {
      for (const wake of [...e.waiters]) wake();
    }
  }

  /** Resolves when all work has settled, or after `timeoutMs`; true when everything settled. */
  async drain(timeoutMs: number): Promise<boolean> {
    const all = Promise.all([...this.entries.values()].map((e) => e.work)).then(() => true);
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<boolean>((resolve) => {
      timer = setTimeout(() => resolve(false), timeoutMs);
    });
    const settled = await Promise.race([all, timeout]);
    clearTimeout(timer);
    return settled;
  }

  close(): void {
    clearInterval(this.sweeper);
    this.beginShutdown();
  }
}
