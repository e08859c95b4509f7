import type { Logger } from 'pino';

/**
 * Follows one of the control-plane's "changed since" feeds for a proxy cache: every `pollMs` it
 * asks for the ids changed since its last look (the first look only sets the mark) and hands a
 * non-empty list to `onChanged`. A failed look is tried again at the next tick from the same mark.
 */
export class ChangeFeed {
  private since: string | null = null;
  private timer: NodeJS.Timeout | undefined;
  /** Looks run one at a time, so the mark only moves forward. */
  private looking: Promise<void> = Promise.resolve();

  constructor(
    private readonly look: (since: string | null) => Promise<{ now: string; ids: string[] }>,
    private readonly onChanged: (ids: string[]) => void,
    private readonly options: { pollMs: number; logger?: Logger | undefined; what: string },
  ) {}

  start(): void {
    const poll = () =>
      this.poll()
        .catch(() => {}) // logged where it failed
        .finally(() => {
          if (this.timer) this.timer = setTimeout(poll, this.options.pollMs).unref();
        });
    this.timer = setTimeout(poll, 0).unref();
  }

  /**
   * Looks now rather than at the next tick: once it resolves, every change the control-plane
   * recorded before the call has been handed on (it rejects when the look fails). A look already
   * under way may have asked before that change, so this one starts after it.
   */
  catchUp(): Promise<void> {
    return this.poll();
  }

  stop(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
  }

  private poll(): Promise<void> {
    const look = this.looking.then(async () => {
      const { now, ids } = await this.look(this.since);
      this.since = now;
      if (ids.length) this.onChanged(ids);
    });
    this.looking = look.catch((err) => this.options.logger?.debug({ err }, `${this.options.what} change poll failed`));
    return look;
  }
}

/**
 * A cache kept true by a change feed: started and stopped with it, and caught up on demand. Once
 * `catchUp` resolves, no change made before the call is still hidden by the cache.
 */
export abstract class FollowsChanges {
  protected abstract readonly changes: ChangeFeed;

  start(): void {
    this.changes.start();
  }

  stop(): void {
    this.changes.stop();
  }

  /** Applies now what the control-plane reports changed, instead of within the next poll. */
  catchUp(): Promise<void> {
    return this.changes.catchUp();
  }
}
