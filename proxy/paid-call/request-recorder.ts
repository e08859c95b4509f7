import type { Logger } from 'pino';
import {
  MAX_RECORDS_PER_BATCH,
  MAX_TALLIES_PER_BATCH,
  type RequestCompletion,
  type RequestRecordInput,
  type RequestTallyInput,
} from '../../shared/contract.js';
import type { ControlPlaneClient } from '../control-plane-client.js';

/**
 * Sends request records to the control-plane in batches. Background entries (completions, and
 * anonymous calls, which are only counted per seller and minute) wait up to `BACKGROUND_LINGER_MS`
 * so that a busy proxy makes one call per batch, not one per request. An `urgent` entry (an
 * identified agent's request, which the seller's usage check will look for while the request is
 * being served) is flushed on the next turn of the event loop, together with whatever else is
 * queued, so concurrent requests still share a call.
 */
const BACKGROUND_LINGER_MS = 50;
/** After a failed flush, held counts wait this long: a control-plane that is down is not hammered. */
const RETRY_AFTER_FAILURE_MS = 1_000;
const MAX_QUEUE = 50_000;
const MINUTE_MS = 60_000;
const DROP_LOG_INTERVAL_MS = 10_000;

type Queued = { done: (err?: unknown) => void } & (
  | { kind: 'create'; record: RequestRecordInput }
  | { kind: 'complete'; completion: RequestCompletion }
);

export class RequestRecorder {
  private queue: Queued[] = [];
  private tallies = new Map<string, RequestTallyInput>();
  private flushing = false;
  private timer: NodeJS.Timeout | undefined;
  private urgentPending = false;
  private dropped = 0;
  private lastDropLog = 0;

  constructor(
    private readonly controlPlane: ControlPlaneClient,
    private readonly logger: Logger,
  ) {}

  create(record: RequestRecordInput, options: { urgent?: boolean } = {}): Promise<void> {
    return this.enqueue((done) => ({ kind: 'create', record, done }), options.urgent ?? false);
  }

  complete(completion: RequestCompletion): Promise<void> {
    return this.enqueue((done) => ({ kind: 'complete', completion, done }), false);
  }

  /** Counts one anonymous call; nothing is kept per request, and no caller waits on it. */
  tally(sellerId: string, sandbox: boolean, lifecycle: RequestTallyInput['lifecycle']): void {
    this.count({ sellerId, minute: Math.floor(Date.now() / MINUTE_MS) * MINUTE_MS, sandbox, lifecycle }, 1);
    this.schedule(false);
  }

  /** Entries and tallies waiting or in flight (0 when idle: nothing is kept per request). */
  pending(): number {
    return this.queue.length + this.tallies.size;
  }

  /**
   * Stores everything queued (at shutdown, and in tests). Counts a failed flush kept get one more
   * try: closing must not wait on a control-plane that is gone.
   */
  async drain(): Promise<void> {
    for (let attempt = 0; attempt < 2; attempt++) {
      while (this.flushing) await new Promise((r) => setTimeout(r, 5));
      if (!this.pending() || (await this.flush({ everything: true }))) return;
    }
  }

  private count(
    key: { sellerId: string; minute: number; sandbox: boolean; lifecycle: RequestTallyInput['lifecycle'] },
    count: number,
  ): void {
    const id = `${key.sellerId} ${key.minute} ${key.sandbox ? 1 : 0} ${key.lifecycle}`;
    const tally = this.tallies.get(id);
    if (tally) tally.count += count;
    else if (this.tallies.size < MAX_TALLIES_PER_BATCH)
      this.tallies.set(id, {
        sellerId: key.sellerId,
        minute: new Date(key.minute).toISOString(),
        sandbox: key.sandbox,
        lifecycle: key.lifecycle,
        count,
      });
    else this.dropped += count;
  }

  private enqueue(make: (done: Queued['done']) => Queued, urgent: boolean): Promise<void> {
    if (this.queue.length >= MAX_QUEUE) {
      // The control-plane is not keeping up; shedding background records beats unbounded memory.
      this.dropped++;
      if (Date.now() - this.lastDropLog > DROP_LOG_INTERVAL_MS) {
        this.lastDropLog = Date.now();
        this.logger.warn({ dropped: this.dropped }, 'request record queue full; records dropped');
      }
      return Promise.reject(new Error('request record queue full'));
    }
    return new Promise((resolve, reject) => {
      this.queue.push(make((err) => (err ? reject(err) : resolve())));
      this.schedule(urgent);
    });
  }

  private schedule(urgent: boolean, lingerMs = BACKGROUND_LINGER_MS): void {
    if (urgent) {
      this.urgentPending = true;
      if (!this.flushing) setImmediate(() => void this.flush());
    } else if (!this.timer && !this.flushing) {
      this.timer = setTimeout(() => void this.flush(), lingerMs);
      this.timer.unref();
    }
  }

  /** Sends queued entries and tallies; false when a batch could not be stored. */
  private async flush(options: { everything?: boolean } = {}): Promise<boolean> {
    if (this.flushing) return false;
    let stored = true;
    clearTimeout(this.timer);
    this.timer = undefined;
    this.flushing = true;
    this.urgentPending = false;
    while (this.queue.length || this.tallies.size) {
      const batch = this.queue.splice(0, MAX_RECORDS_PER_BATCH);
      const tallies = [...this.tallies.values()];
      this.tallies = new Map();
      const created: RequestRecordInput[] = [];
      const completed: RequestCompletion[] = [];
      for (const entry of batch) entry.kind === 'create' ? created.push(entry.record) : completed.push(entry.completion);
      try {
        await this.controlPlane.call('recordRequests', { created, completed, tallies });
        for (const entry of batch) entry.done();
      } catch (err) {
        this.logger.warn({ err, records: batch.length, tallies: tallies.length }, 'storing request records failed');
        for (const entry of batch) entry.done(err);
        // Counts are kept for the next flush: a control-plane restart loses none of them.
        for (const t of tallies) this.count({ ...t, minute: Date.parse(t.minute) }, t.count);
        stored = false;
        break;
      }
      // Keep going only for what someone waits on; background entries wait for the next linger.
      if (!this.urgentPending && !options.everything) break;
      this.urgentPending = false;
    }
    this.flushing = false;
    if (this.pending()) this.schedule(this.urgentPending, stored ? BACKGROUND_LINGER_MS : RETRY_AFTER_FAILURE_MS);
    return stored;
  }
}
