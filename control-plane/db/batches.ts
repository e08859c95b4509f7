/**
 * Work that arrives together, sent to the database together: items added during one turn of the
 * event loop go out in one batch (at most `maxBatch`), with at most `maxInFlight` batches out at
 * once; items that arrive meanwhile wait for the next. A statement's round trip, and a commit's
 * flush, cost more than one item's work, so under load the batches grow by themselves, while
 * alone an item goes at the next turn. A batch that fails is done again one item at a time, so
 * only an item at fault fails, with its own error. Usage lookups (usage/reader.ts) and usage
 * writes (usage/group-commit.ts) both go this way.
 */
export class Batches<Item, Result> {
  private waiting: { item: Item; resolve: (result: Result) => void; reject: (err: unknown) => void }[] = [];
  private inFlight = 0;
  private scheduled = false;

  constructor(
    /** Does the items' work, answering each item's result in order. */
    private readonly run: (items: readonly Item[]) => Promise<Result[]>,
    private readonly limits: { maxBatch: number; maxInFlight: number },
  ) {}

  add(item: Item): Promise<Result> {
    return new Promise((resolve, reject) => {
      this.waiting.push({ item, resolve, reject });
      this.schedule();
    });
  }

  private schedule(): void {
    if (this.scheduled || this.inFlight >= this.limits.maxInFlight || this.waiting.length === 0) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      while (this.inFlight < this.limits.maxInFlight && this.waiting.length > 0) {
        void this.send(this.waiting.splice(0, this.limits.maxBatch));
      }
    });
  }

  private async send(batch: typeof this.waiting): Promise<void> {
    this.inFlight++;
    try {
      if (batch.length > 1) {
        const results = await this.run(batch.map((w) => w.item)).catch(() => undefined);
        if (results) {
          for (const [i, w] of batch.entries()) w.resolve(results[i]!);
          return;
        }
      }
      for (const w of batch) await this.run([w.item]).then((alone) => w.resolve(alone[0]!), w.reject);
    } finally {
      this.inFlight--;
      this.schedule();
    }
  }
}
