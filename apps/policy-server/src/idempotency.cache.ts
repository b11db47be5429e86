// X-Idempotency-Key handling: a request repeated with the same key (an HTTP-level retry after a lost answer)
// gets the first answer again instead of running twice. Answers are kept for a TTL.

interface Cached {
  answer: Promise<unknown>;
  at: number;
}

export class IdempotencyCache {
  private readonly entries = new Map<string, Cached>();

  constructor(private readonly ttlMs: number) {}

  /** The answer for (endpoint, key): computed by `produce` the first time, replayed afterwards. */
  run<T>(endpoint: string, key: string | undefined, produce: () => Promise<T>): Promise<T> {
    if (!key) return produce();
    this.sweep();
    const id = `${endpoint}\u0000${key}`;
    const hit = this.entries.get(id);
    if (hit) return hit.answer as Promise<T>;
    const answer = produce();
    this.entries.set(id, { answer, at: Date.now() });
    // a refused request may be retried with the same key: forget failures
    answer.catch(() => this.entries.delete(id));
    return answer;
  }

  private sweep(now = Date.now()): void {
    // entries are in insertion (= time) order: stop at the first fresh one
    for (const [id, e] of this.entries) {
      if (now - e.at <= this.ttlMs) break;
      this.entries.delete(id);
    }
  }
}
