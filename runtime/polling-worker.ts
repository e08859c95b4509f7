import type { Logger } from 'pino';

/**
 * A background worker over an outbox table: a pass every `pollMs`, at once after `wake()` (a row
 * was just queued) and again at once after a pass that found a full batch. Passes never overlap;
 * `stop` waits for the one running. Subclasses say what a pass does.
 */
export abstract class PollingWorker {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private again = false;
  private stopped = false;

  protected constructor(
    protected readonly logger: Logger,
    private readonly polling: { pollMs: number; batch: number; what: string },
  ) {}

  /** One pass; returns how many rows it found due. */
  abstract runOnce(now?: Date): Promise<number>;

  start(): void {
    this.schedule(0);
  }

  /** Runs a pass now rather than at the next poll. */
  wake(): void {
    if (this.running) this.again = true;
    else this.schedule(0);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.running;
  }

  private schedule(delayMs: number): void {
    if (this.stopped) return;
    clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.running = this.runOnce()
        .then((due) => {
          if (due >= this.polling.batch) this.again = true;
        })
        .catch((err) => this.logger.error({ err }, `${this.polling.what} pass failed`))
        .finally(() => {
          this.running = undefined;
          const again = this.again;
          this.again = false;
          this.schedule(again ? 0 : this.polling.pollMs);
        });
    }, delayMs);
    this.timer.unref();
  }
}
