import type { Logger } from 'pino';

/**
 * A pass in two parts: `due` once its work is done, and `finishing`, the bookkeeping that may still
 * run while the next pass starts (see `pass`).
 */
export type Pass = { due: number; finishing?: Promise<void> };

/**
 * A background worker over an outbox table: a pass every `pollMs`, at once after `wake()` (a row
 * was just queued) and again at once after a pass that found a full batch. Passes never overlap,
 * but a pass's `finishing` may run beside the next one (at most one such at a time); `stop` waits
 * for both. Subclasses say what a pass does.
 */
export abstract class PollingWorker {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private finishing: Promise<void> | undefined;
  private again = false;
  private stopped = false;

  protected constructor(
    protected readonly logger: Logger,
    private readonly polling: { pollMs: number; batch: number; what: string },
  ) {}

  /** One pass, finished; returns how many rows it found due. */
  abstract runOnce(now?: Date): Promise<number>;

  /** One pass as the worker runs it: by default `runOnce`, with nothing left to finish. */
  protected async pass(): Promise<Pass> {
    return { due: await this.runOnce() };
  }

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
    await this.finishing;
  }

  private schedule(delayMs: number): void {
    if (this.stopped) return;
    clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.running = this.pass()
        .then(async ({ due, finishing }) => {
          // The earlier pass's bookkeeping has had this whole pass to end; the next waits for it.
          const earlier = this.finishing;
          this.finishing = finishing?.catch((err) => this.logger.error({ err }, `${this.polling.what} pass failed`));
          await earlier;
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
