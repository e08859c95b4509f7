import type { Logger } from 'pino';

/**
 * A pass in two parts: `due` once its work is done, and `finishing`, the bookkeeping that may still
 * run while the next pass starts (see `pass`).
 */
export type Pass = { due: number; finishing?: Promise<void> };

/**
 * A background worker over an outbox table: a pass every `pollMs`, at once after `wake()` (a row
 * was just queued) and again at once after a pass that found a full batch. Passes never overlap,
 * but the `finishing` of up to `beside` earlier passes (1 unless said) may run beside the next
 * one; a pass that would leave more waits for the oldest. `stop` waits for them all. Subclasses
 * say what a pass does.
 */
export abstract class PollingWorker {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  /** The passes still finishing, oldest first. */
  private readonly finishing: Promise<void>[] = [];
  private again = false;
  private stopped = false;

  protected constructor(
    protected readonly logger: Logger,
    private readonly polling: { pollMs: number; batch: number; what: string; beside?: number },
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
    await Promise.all(this.finishing);
  }

  private schedule(delayMs: number): void {
    if (this.stopped) return;
    clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.running = this.pass()
        .then(async ({ due, finishing }) => {
          if (finishing) {
            const tracked: Promise<void> = finishing
              .catch((err) => this.logger.error({ err }, `${this.polling.what} pass failed`))
              .finally(() => this.finishing.splice(this.finishing.indexOf(tracked), 1));
            this.finishing.push(tracked);
          }
          // The earlier passes' bookkeeping has had this pass to end: the next pass waits for the
          // oldest while more than `beside` would still run beside it.
          while (this.finishing.length > (this.polling.beside ?? 1)) await this.finishing[0];
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
