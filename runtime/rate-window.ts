/** The start of the fixed window `now` falls in. */
export function windowStartOf(now: number, windowMs: number): number {
  return now - (now % windowMs);
}

/** What a refused request is told to wait: whole seconds until its window turns. */
export function secondsUntilTurn(windowStart: number, windowMs: number, now: number): number {
  return Math.ceil((windowStart + windowMs - now) / 1000);
}

/**
 * A per-key request budget over fixed windows (one minute by default), in memory: enough for a
 * limit meant to stop a runaway client, not to bill it. Keys not seen in the current window are
 * forgotten when the window turns, so memory follows the active keys only.
 */
export class RateWindow {
  private windowStart = 0;
  private readonly counts = new Map<string, number>();

  constructor(
    private readonly limit: number,
    private readonly windowMs = 60_000,
  ) {}

  /** Counts one request for `key`: undefined when allowed, else the seconds until the window turns. */
  take(key: string, now = Date.now()): number | undefined {
    const start = windowStartOf(now, this.windowMs);
    if (start !== this.windowStart) {
      this.windowStart = start;
      this.counts.clear();
    }
    const count = (this.counts.get(key) ?? 0) + 1;
    this.counts.set(key, count);
    return count > this.limit ? secondsUntilTurn(start, this.windowMs, now) : undefined;
  }
}
