// Futures of the Tinker protocol: each work request gets a request id at once; retrieve_future long-polls
// until its result is there (or answers try_again). Finished results are kept for a TTL, then expire (410).
// Request ids are random (not guessable from one another). Results nobody has fetched yet are bounded in number
// (pending work included) and in bytes: admit() refuses new work beyond either bound.
import { randomUUID } from 'node:crypto';
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
  /** counted in the unfetched bounds until its outcome is first answered (or it expires) */
  unfetched: boolean;
  bytes: number;
  waiters: Set<() => void>;
  work: Promise<void>;
}

const ID_PREFIX = 'req_';
/** ids of expired results remembered (to answer 410 rather than 404), most recent */
const EXPIRED_IDS_KEPT = 100_000;

export interface ResultBounds {
  maxUnfetchedResults: number;
  maxUnfetchedResultBytes: number;
}

/** New work refused: too many results (or bytes of results) wait to be fetched. */
export class ResultBudgetError extends Error {
  override readonly name = 'ResultBudgetError';
}

/** Bytes a result holds, as JSON. */
function resultBytes(outcome: FutureOutcome): number {
  if (outcome.status === 'done') return Buffer.byteLength(JSON.stringify(outcome.result) ?? '', 'utf8');
  if (outcome.status === 'failed') return Buffer.byteLength(outcome.error, 'utf8');
  return 0;
}

/** The category of a failure: errors with `category: 'user'` (caller mistakes) are 'user', others 'server'. */
export function errorCategory(err: unknown): RequestErrorCategory {
  return (err as { category?: unknown } | null)?.category === 'user' ? 'user' : 'server';
}

export class FutureStore {
  private readonly entries = new Map<string, Entry>();
  private readonly expiredIds = new Set<string>();
  private unfetchedCount = 0;
  private unfetchedBytes = 0;
  private shuttingDown = false;
  private readonly sweeper: NodeJS.Timeout;

  constructor(
    private readonly ttlMs: number,
    private readonly onSettled: (outcome: 'done' | 'failed') => void = () => {},
    private readonly bounds: ResultBounds = { maxUnfetchedResults: Number.MAX_SAFE_INTEGER, maxUnfetchedResultBytes: Number.MAX_SAFE_INTEGER },
  ) {
    this.sweeper = setInterval(() => this.sweep(), Math.min(ttlMs, 60_000));
    this.sweeper.unref();
  }

  /** Throws ResultBudgetError when one more result would pass a bound; call before starting the work. */
  admit(): void {
    const { maxUnfetchedResults, maxUnfetchedResultBytes } = this.bounds;
    if (this.unfetchedCount >= maxUnfetchedResults) {
      throw new ResultBudgetError(`${this.unfetchedCount} results wait to be fetched; this server holds at most ${maxUnfetchedResults} (RX_POLICY_MAX_UNFETCHED_RESULTS): fetch them with retrieve_future, then retry`);
    }
    if (this.unfetchedBytes >= maxUnfetchedResultBytes) {
      throw new ResultBudgetError(`${this.unfetchedBytes} bytes of results wait to be fetched; this server holds at most ${maxUnfetchedResultBytes} (RX_POLICY_MAX_UNFETCHED_RESULT_BYTES): fetch them with retrieve_future, then retry`);
    }
  }

  /** Registers work whose result a client will poll for; returns the request id. */
  create(work: Promise<unknown>): string {
    const id = `${ID_PREFIX}${randomUUID()}`;
    const entry: Entry = { outcome: { status: 'pending' }, unfetched: true, bytes: 0, waiters: new Set(), work: Promise.resolve() };
    this.unfetchedCount++;
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
    if (entry.unfetched) {
      entry.bytes = resultBytes(outcome);
      this.unfetchedBytes += entry.bytes;
    }
    this.onSettled(outcome.status === 'done' ? 'done' : 'failed');
    for (const wake of entry.waiters) wake();
    entry.waiters.clear();
  }

  /** The outcome of `id`, waiting up to `timeoutMs` while it is pending (not at all once shutdown began). */
  async wait(id: string, timeoutMs: number): Promise<FutureOutcome> {
    const entry = this.entries.get(id);
    if (!entry) return { status: this.expiredIds.has(id) ? 'expired' : 'unknown' };
    if (entry.outcome.status !== 'pending' || this.shuttingDown || timeoutMs <= 0) return this.fetched(entry);
    await new Promise<void>((resolve) => {
      const wake = (): void => {
        clearTimeout(timer);
        entry.waiters.delete(wake);
        resolve();
      };
      const timer = setTimeout(wake, timeoutMs);
      entry.waiters.add(wake);
    });
    return this.fetched(entry);
  }

  /** The outcome as answered to a client: a settled one no longer counts as unfetched. */
  private fetched(entry: Entry): FutureOutcome {
    if (entry.outcome.status !== 'pending') this.release(entry);
    return entry.outcome;
  }

  private release(entry: Entry): void {
    if (!entry.unfetched) return;
    entry.unfetched = false;
    this.unfetchedCount--;
    this.unfetchedBytes -= entry.bytes;
  }

  /** results not fetched yet (pending work included) and the bytes of the finished ones */
  unfetched(): { results: number; bytes: number } {
    return { results: this.unfetchedCount, bytes: this.unfetchedBytes };
  }

  pendingCount(): number {
    let n = 0;
    for (const e of this.entries.values()) if (e.outcome.status === 'pending') n++;
    return n;
  }

  private sweep(now = Date.now()): void {
    for (const [id, e] of this.entries) {
      if (e.settledAt === undefined || now - e.settledAt <= this.ttlMs) continue;
      this.release(e);
      this.entries.delete(id);
      this.expiredIds.add(id);
    }
    for (const id of this.expiredIds) {
      if (this.expiredIds.size <= EXPIRED_IDS_KEPT) break;
      this.expiredIds.delete(id);
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
