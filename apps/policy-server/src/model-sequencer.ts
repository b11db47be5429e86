// Runs one training model's requests in seq_id order (1, 2, …), as the Tinker service does: a request whose
// predecessors have not arrived waits for them. A seq_id can be used once.

export class SeqConflictError extends Error {
  override readonly name = 'SeqConflictError';
}

interface Queued {
  run: () => Promise<unknown>;
  resolve: (v: unknown) => void;
  reject: (e: unknown) => void;
}

export class ModelSequencer {
  private next = 1;
  private readonly queued = new Map<number, Queued>();
  private running = false;

  /** the seq_id the model will run next */
  get nextSeqId(): number {
    return this.next;
  }

  /** Queues `run` as request `seq`; it runs after seq-1 has finished. Throws SeqConflictError if seq was used. */
  enqueue<T>(seq: number, run: () => Promise<T>): Promise<T> {
    if (seq < this.next || this.queued.has(seq)) {
      // the answer names only what the caller sent: the model's next seq_id is another client's state
      throw new SeqConflictError(`seq_id ${seq} was already used`);
    }
    const done = new Promise<T>((resolve, reject) => {
      this.queued.set(seq, { run, resolve: resolve as (v: unknown) => void, reject });
    });
    void this.pump();
    return done;
  }

  private async pump(): Promise<void> {
    if (this.running) return;
    this.running = true;
    try {
      for (let job = this.queued.get(this.next); job; job = this.queued.get(this.next)) {
        this.queued.delete(this.next);
        this.next++;
        try {
          job.resolve(await job.run());
        } catch (err) {
          job.reject(err);
        }
      }
    } finally {
      this.running = false;
    }
  }
}
