// Runs one training model's requests in seq_id order (1, 2, …), as the Tinker service does: a request whose
// predecessors have not arrived waits for them. A seq_id is used once: by the request that ran, by a request
// the server refused (the SDK counts a refused call as consumed, so the next one must not wait for it), or by a
// gap: when the queue has waited `gapTimeoutMs` for a seq_id that never came, the first waiting request fails
// and every seq_id up to it counts as used, so the model does not stall for ever.

export class SeqConflictError extends Error {
  override readonly name = 'SeqConflictError';
}

/** The waiting request failed because an earlier seq_id never arrived; the caller's mistake (category user). */
export class SeqGapError extends Error {
  override readonly name = 'SeqGapError';
  readonly category = 'user' as const;
}

interface Queued {
  run: () => Promise<unknown>;
  resolve: (v: unknown) => void;
  reject: (e: unknown) => void;
}

/** How long a request waits for a missing predecessor by default. */
export const DEFAULT_SEQ_GAP_TIMEOUT_MS = 120_000;

export class ModelSequencer {
  private next = 1;
  private readonly queued = new Map<number, Queued>();
  /** seq_ids ahead of `next` that were refused (consumed without running) */
  private readonly refused = new Set<number>();
  private running = false;
  private gapTimer?: NodeJS.Timeout;
  /** the seq_id the gap timer waits for (the timer is not restarted while the same one is missing) */
  private gapFor = 0;

  constructor(private readonly gapTimeoutMs: number = DEFAULT_SEQ_GAP_TIMEOUT_MS) {}

  /** the seq_id the model will run next */
  get nextSeqId(): number {
    return this.next;
  }

  /** True when `seq` ran, is queued, or was refused. */
  isUsed(seq: number): boolean {
    return seq < this.next || this.queued.has(seq) || this.refused.has(seq);
  }

  /** Queues `run` as request `seq`; it runs after seq-1 has finished. Throws SeqConflictError if seq was used. */
  enqueue<T>(seq: number, run: () => Promise<T>): Promise<T> {
    if (this.isUsed(seq)) {
      // the answer names only what the caller sent: the model's next seq_id is another client's state
      throw new SeqConflictError(`seq_id ${seq} was already used`);
    }
    const done = new Promise<T>((resolve, reject) => {
      this.queued.set(seq, { run, resolve: resolve as (v: unknown) => void, reject });
    });
    void this.pump();
    return done;
  }

  /** Marks a refused request's seq_id as used, so requests after it do not wait for it. */
  refuse(seq: number): void {
    if (!Number.isInteger(seq) || seq < 1 || this.isUsed(seq)) return;
    this.refused.add(seq);
    void this.pump();
  }

  /** Stops the gap timer (the server is closing). */
  close(): void {
    clearTimeout(this.gapTimer);
    this.gapTimer = undefined;
  }

  private skipRefused(): void {
    while (this.refused.delete(this.next)) this.next++;
  }

  private async pump(): Promise<void> {
    if (this.running) return;
    this.running = true;
    try {
      this.skipRefused();
      for (let job = this.queued.get(this.next); job; job = this.queued.get(this.next)) {
        this.queued.delete(this.next);
        this.next++;
        try {
          job.resolve(await job.run());
        } catch (err) {
          job.reject(err);
        }
        this.skipRefused();
      }
    } finally {
      this.running = false;
    }
    if (this.queued.size > 0) this.armGapTimer();
  }

  private armGapTimer(): void {
    if (this.gapTimer && this.gapFor === this.next) return;
    clearTimeout(this.gapTimer);
    const waitingFor = this.next;
    this.gapFor = waitingFor;
    this.gapTimer = setTimeout(() => this.onGap(waitingFor), this.gapTimeoutMs);
    this.gapTimer.unref();
  }

  private onGap(waitingFor: number): void {
    this.gapTimer = undefined;
    if (this.running || this.next !== waitingFor || this.queued.has(this.next)) return;
    const first = Math.min(...this.queued.keys());
    const job = this.queued.get(first);
    if (!job) return;
    this.queued.delete(first);
    for (let s = this.next; s < first; s++) this.refused.delete(s);
    this.next = first + 1;
    const missing = first - waitingFor === 1 ? `seq_id ${waitingFor}` : `seq_ids ${waitingFor}..${first - 1}`;
    job.reject(new SeqGapError(`seq_id ${first} waited ${this.gapTimeoutMs} ms for ${missing}, which never arrived; they are skipped and this request is not run`));
    void this.pump();
  }
}
