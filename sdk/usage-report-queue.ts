import type { UsageApiError } from './usage-errors.js';

/** What one attempt to send a report came to: hub's answer, an outage, or a refusal retrying cannot mend. */
export type ReportAttempt<Result> = { answered: Result } | { outage: UsageApiError } | { refused: UsageApiError };

export type ReportQueueOptions = {
  /** Reports kept at most; past it, `add` refuses. */
  max: number;
  /** The wait before the first retry after an outage, doubled after each failed pass up to `maxDelayMs`. */
  delayMs: number;
  maxDelayMs: number;
};

export type ReportQueueEvents<Request, Result> = {
  /** hub answered a kept report: recorded, a duplicate of one that got through, or refused (402/404/409). */
  delivered(request: Request, result: Result): void;
  /** A kept report hub will never take: its credentials were refused, or the queue closed first. */
  dropped(request: Request, error: UsageApiError | undefined): void;
};

/**
 * Usage reports kept while hub's usage API is down (the `failOpen` policy), sent again in order
 * until hub answers. A report carries its idempotency key, so sending it again is safe: one that
 * reached hub before the answer was lost comes back `duplicate: true`, not charged twice.
 *
 * One pass at a time walks the queue from the oldest report; an outage ends the pass and the next
 * one waits, 1 s doubling to a minute by default, spread ±20% so that many sellers' queues do not
 * all return to a recovering hub in the same instant. The timer does not keep the process alive:
 * `close()` at shutdown sends what it can. Reports live in memory and are lost with the process.
 */
export class ReportRetryQueue<Request, Result> {
  private readonly waiting: Request[] = [];
  private delayMs: number;
  private timer: NodeJS.Timeout | undefined;
  private pass: Promise<void> | undefined;
  private closed = false;

  constructor(
    private readonly send: (request: Request) => Promise<ReportAttempt<Result>>,
    private readonly options: ReportQueueOptions,
    private readonly events: ReportQueueEvents<Request, Result>,
  ) {
    this.delayMs = options.delayMs;
  }

  get size(): number {
    return this.waiting.length;
  }

  /** Keeps a report for a later pass; false when the queue is full or closed. */
  add(request: Request): boolean {
    if (this.closed || this.waiting.length >= this.options.max) return false;
    this.waiting.push(request);
    this.schedule();
    return true;
  }

  /** hub answered something else: try the queue now rather than at the next timer. */
  hubAnswered(): void {
    if (this.waiting.length === 0 || this.closed) return;
    this.delayMs = this.options.delayMs;
    void this.flush();
  }

  /** One pass now; resolves when it has ended (the queue is empty, or hub is still down). Never rejects. */
  flush(): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    this.pass ??= this.walk().finally(() => {
      this.pass = undefined;
      if (this.waiting.length > 0) this.schedule();
    });
    return this.pass;
  }

  /**
   * Stops retrying: one last pass, for at most `timeoutMs`; reports still waiting then are dropped
   * (each told through `dropped`), and one still on its way is told when hub answers it or not.
   * Resolves with how many were dropped here.
   */
  async close(timeoutMs: number): Promise<number> {
    if (this.closed) return 0;
    let deadline: NodeJS.Timeout | undefined;
    await Promise.race([this.flush(), new Promise<void>((resolve) => (deadline = setTimeout(resolve, timeoutMs)))]);
    clearTimeout(deadline);
    this.closed = true;
    clearTimeout(this.timer);
    const left = this.waiting.splice(0);
    for (const request of left) this.events.dropped(request, undefined);
    return left.length;
  }

  private schedule(): void {
    if (this.timer !== undefined || this.pass !== undefined || this.closed) return;
    const spread = 0.8 + Math.random() * 0.4;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      void this.flush();
    }, this.delayMs * spread).unref();
  }

  private async walk(): Promise<void> {
    while (this.waiting.length > 0 && !this.closed) {
      // Out of the queue while on its way, so that close() leaves it to this pass to tell.
      const request = this.waiting.shift()!;
      let attempt: ReportAttempt<Result>;
      try {
        attempt = await this.send(request);
      } catch (err) {
        // `send` answers every failure as a value; anything thrown is a bug, and must not loop for ever.
        attempt = { refused: err as UsageApiError };
      }
      if ('outage' in attempt) {
        if (this.closed) {
          this.events.dropped(request, attempt.outage);
          return;
        }
        this.waiting.unshift(request);
        this.delayMs = Math.min(this.delayMs * 2, this.options.maxDelayMs);
        return;
      }
      this.delayMs = this.options.delayMs;
      if ('answered' in attempt) this.events.delivered(request, attempt.answered);
      else this.events.dropped(request, attempt.refused);
    }
  }
}
