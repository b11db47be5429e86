// The embedded model computes on this process's one thread. Requests that arrive together would otherwise run back
// to back in one turn of the event loop, so that a health check or a future poll waits for all of them (6.3 s
// seen on an idle 2-core machine, enough for a worker's 2.5 s backend probe to fail). The lane runs one request's
// compute at a time, each after a turn of the event loop (setImmediate), so whatever arrived meanwhile is answered
// between two requests. Order is kept (first come, first served); a failure ends only its own request.
export class ComputeLane {
  private tail: Promise<unknown> = Promise.resolve();

  run<T>(work: () => Promise<T>): Promise<T> {
    const turn = this.tail.then(() => new Promise<void>((resolve) => setImmediate(resolve)));
    const done = turn.then(work);
    this.tail = done.catch(() => undefined);
    return done;
  }
}
