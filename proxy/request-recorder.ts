import type { Logger } from 'pino';
import type { RequestCompletion, RequestRecordInput } from '../control-plane/internal/request-records.js';
import type { ControlPlaneClient } from './control-plane-client.js';

/**
 * Sends request records to the control-plane in batches. Background entries (anonymous requests,
 * completions) wait up to `BACKGROUND_LINGER_MS` so that a busy proxy makes one call per batch, not
 * one per request. An entry someone awaits (`urgent`: an identified agent's request, which the
 * seller's usage check must find before it is forwarded) is flushed on the next turn of the event
 * loop, together with whatever else is queued, so concurrent requests still share a call.
 */
const BACKGROUND_LINGER_MS = 50;
const MAX_BATCH = 1_000;
const MAX_QUEUE = 50_000;
const DROP_LOG_INTERVAL_MS = 10_000;

type Queued = { done: (err?: unknown) => void } & ({ kind: 'create'; record: RequestRecordInput } | { kind: 'complete'; completion: RequestCompletion });

export class RequestRecorder {
  private queue: Queued[] = [];
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

  /** Entries waiting or in flight (0 when idle: nothing is kept per request). */
  pending(): number {
    return this.queue.length;
  }

  async drain(): Promise<void> {
    if (this.queue.length && !this.flushing) void this.flush();
    while (this.flushing || this.queue.length) await new Promise((r) => setTimeout(r, 5));
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

  private schedule(urgent: boolean): void {
    if (urgent) {
      this.urgentPending = true;
      if (!this.flushing) setImmediate(() => void this.flush());
    } else if (!this.timer && !this.flushing) {
      this.timer = setTimeout(() => void this.flush(), BACKGROUND_LINGER_MS);
      this.timer.unref();
    }
  }

  private async flush(): Promise<void> {
    if (this.flushing) return;
    clearTimeout(this.timer);
    this.timer = undefined;
    this.flushing = true;
    this.urgentPending = false;
    while (this.queue.length) {
      const batch = this.queue.splice(0, MAX_BATCH);
      const created: RequestRecordInput[] = [];
      const completed: RequestCompletion[] = [];
      for (const entry of batch) entry.kind === 'create' ? created.push(entry.record) : completed.push(entry.completion);
      try {
        await this.controlPlane.internal.recordRequests.mutate({ created, completed });
        for (const entry of batch) entry.done();
      } catch (err) {
        this.logger.warn({ err, records: batch.length }, 'storing request records failed');
        for (const entry of batch) entry.done(err);
      }
      // Keep going only for what someone waits on; background entries wait for the next linger.
      if (!this.urgentPending) break;
      this.urgentPending = false;
    }
    this.flushing = false;
    if (this.queue.length) this.schedule(this.urgentPending);
  }
}
