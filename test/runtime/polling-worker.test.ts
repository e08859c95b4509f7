import pino from 'pino';
import t from 'tap';
import { type Pass, PollingWorker } from '../../runtime/polling-worker.js';

// A pass's bookkeeping (`finishing`) may run beside the next pass, one at a time: the pass after
// that waits for it, and stop() waits for the last one.

class Scripted extends PollingWorker {
  readonly started: number[] = [];
  readonly finishes: (() => void)[] = [];
  constructor(private readonly passes: number) {
    super(pino({ level: 'silent' }), { pollMs: 60_000, batch: 2, what: 'scripted' });
  }
  async runOnce(): Promise<number> {
    return 0;
  }
  protected override async pass(): Promise<Pass> {
    const n = this.started.length;
    this.started.push(n);
    if (n >= this.passes) return { due: 0 };
    let finish: () => void = () => {};
    const finishing = new Promise<void>((resolve) => (finish = resolve));
    this.finishes.push(finish);
    // A full batch: the worker goes on at once.
    return { due: 2, finishing };
  }
}

/** Waits until `ready()` holds, turn by turn of the event loop (bounded). */
async function until(ready: () => boolean): Promise<boolean> {
  for (let i = 0; i < 1_000 && !ready(); i++) await new Promise((resolve) => setImmediate(resolve));
  return ready();
}

t.test("a pass's bookkeeping runs beside the next pass, one at a time", async (t) => {
  const worker = new Scripted(3);
  worker.start();
  t.ok(await until(() => worker.started.length === 2), 'the second pass starts while the first is still finishing');
  await new Promise((resolve) => setTimeout(resolve, 20));
  t.equal(worker.started.length, 2, 'the third waits for the first to finish');
  worker.finishes[0]!();
  t.ok(await until(() => worker.started.length === 3), 'and starts once it has');
  let stopped = false;
  const stopping = worker.stop().then(() => (stopped = true));
  await new Promise((resolve) => setTimeout(resolve, 20));
  t.equal(stopped, false, 'stop waits for what is still finishing');
  for (const finish of worker.finishes) finish();
  await stopping;
  t.equal(stopped, true);
});
