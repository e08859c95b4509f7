import type { Logger } from 'pino';

export type PageViewRow = {
  id: string;
  organizationId: string;
  sellerId: string;
  path: string;
  status: number | null;
  durationMs: number | null;
  capturedAt: Date | null;
  journeyId: string | null;
  viewerId: string;
  viewerClass: string;
  acceptsMarkdown: boolean;
  country: string | null;
  referrerHost: string | null;
  createdAt: Date;
};

/**
 * Page views are answered 204 before they are written (spec: Page-view rules): accepted views
 * wait here and are written in batches, every `flushMs` or as soon as a batch is full. A write
 * that fails keeps its views and is tried again with a growing pause, so an accepted view is not
 * lost to a database hiccup; but a row the database refuses while it answers (a value it cannot
 * store) is found by halving the batch and dropped, logged, rather than retried for ever. Memory
 * is bounded: past `maxBuffered` waiting views, new ones are dropped and counted (logged once a
 * minute at most), never queued without limit.
 */
export class PageViewSink {
  private buffer: PageViewRow[] = [];
  private timer: NodeJS.Timeout | undefined;
  private writing: Promise<void> | undefined;
  private failures = 0;
  private droppedSinceLog = 0;
  private lastDropLog = 0;
  dropped = 0;

  constructor(
    /** Stores a batch (with its rollups: analytics/page-view-rollup.ts); throws to have it retried. */
    private readonly write: (rows: PageViewRow[]) => Promise<unknown>,
    private readonly logger: Logger,
    private readonly options = { flushMs: 200, batch: 1_000, maxBuffered: 100_000 },
    /** Whether the database answers: a batch that fails while it does holds a row it refuses. */
    private readonly reachable: () => Promise<boolean> = async () => false,
  ) {}

  /** Queues a view; false when the buffer is full and the view was dropped. */
  accept(row: PageViewRow): boolean {
    if (this.buffer.length >= this.options.maxBuffered) {
      this.dropped++;
      this.droppedSinceLog++;
      if (Date.now() - this.lastDropLog > 60_000) {
        this.logger.warn({ dropped: this.droppedSinceLog, total: this.dropped }, 'page views dropped: the write buffer is full');
        this.lastDropLog = Date.now();
        this.droppedSinceLog = 0;
      }
      return false;
    }
    this.buffer.push(row);
    this.schedule(this.buffer.length >= this.options.batch ? 0 : this.options.flushMs);
    return true;
  }

  get waiting(): number {
    return this.buffer.length;
  }

  /** Writes everything waiting (tests, and stopping): tries until empty or `attempts` writes failed. */
  async drain(attempts = 5): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    await this.writing;
    let failed = 0;
    while (this.buffer.length && failed < attempts) {
      if (!(await this.writeBatch())) failed++;
    }
  }

  private schedule(delayMs: number): void {
    if (this.timer || this.writing) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.writing = this.writeBatch().then((ok) => {
        this.writing = undefined;
        if (this.buffer.length) this.schedule(ok ? 0 : Math.min(30_000, 500 * 2 ** Math.min(this.failures, 6)));
      });
    }, delayMs);
    this.timer.unref();
  }

  private async writeBatch(): Promise<boolean> {
    const batch = this.buffer.splice(0, this.options.batch);
    try {
      await this.write(batch);
      this.failures = 0;
      return true;
    } catch (err) {
      if (await this.reachable()) {
        const refused = await this.writeApart(batch);
        // Some rows went in and the database still answers: the rest are refused for what they
        // hold, and would hold back every view after them. If none went in, the cause is not
        // the rows: all wait.
        if (refused.length < batch.length && (refused.length === 0 || (await this.reachable()))) {
          if (refused.length)
            this.logger.error({ err, dropped: refused.map((row) => row.id) }, 'page views the database refuses were dropped');
          this.failures = 0;
          return true;
        }
        batch.splice(0, batch.length, ...refused);
      }
      this.buffer.unshift(...batch);
      this.failures++;
      this.logger.warn({ err, waiting: this.buffer.length }, 'writing page views failed; will retry');
      return false;
    }
  }

  /** Writes `rows` by halves down to single rows; returns those refused alone. */
  private async writeApart(rows: PageViewRow[]): Promise<PageViewRow[]> {
    if (rows.length === 1) {
      try {
        await this.write(rows);
        return [];
      } catch {
        return rows;
      }
    }
    const refused: PageViewRow[] = [];
    const middle = rows.length >> 1;
    for (const half of [rows.slice(0, middle), rows.slice(middle)]) {
      try {
        await this.write(half);
      } catch {
        refused.push(...(await this.writeApart(half)));
      }
    }
    return refused;
  }
}
