/**
 * A few slots (the conversion threads) shared fairly between organizations: at most `slots` tasks
 * at a time, at most `perKey` of them one key's, so a key with many long tasks never holds every
 * slot. A task that cannot start waits in its key's line; when a slot frees, the key served least
 * recently goes next (round-robin), whatever the length of the other lines. Lines are bounded:
 * `refusal` says when one more task would wait beyond them.
 */
export type FairShareLimits = {
  slots: number;
  perKey: number;
  waitingPerKey: number;
  waitingInAll: number;
};

type Line = { running: number; waiting: Array<() => void>; lastServed: number };

export class FairShare {
  private running = 0;
  private waiting = 0;
  private served = 0;
  private readonly lines = new Map<string, Line>();

  constructor(readonly limits: FairShareLimits) {}

  /** Why one more task of `key` cannot be taken (its line or all lines are full); undefined when it can. */
  refusal(key: string): 'key' | 'all' | undefined {
    if (this.startsAtOnce(key)) return undefined;
    if ((this.lines.get(key)?.waiting.length ?? 0) >= this.limits.waitingPerKey) return 'key';
    if (this.waiting >= this.limits.waitingInAll) return 'all';
    return undefined;
  }

  /** Runs `task` once `key` has a slot (check `refusal` first: the lines' bounds are not enforced here). */
  async run<T>(key: string, task: () => Promise<T>): Promise<T> {
    const line = this.lineOf(key);
    if (this.startsAtOnce(key)) this.start(line);
    else {
      this.waiting++;
      await new Promise<void>((resolve) => line.waiting.push(resolve));
    }
    try {
      return await task();
    } finally {
      line.running--;
      this.running--;
      if (line.running === 0 && line.waiting.length === 0) this.lines.delete(key);
      this.next();
    }
  }

  private startsAtOnce(key: string): boolean {
    const line = this.lines.get(key);
    return this.running < this.limits.slots && (line?.running ?? 0) < this.limits.perKey && !line?.waiting.length;
  }

  private lineOf(key: string): Line {
    let line = this.lines.get(key);
    if (!line) {
      line = { running: 0, waiting: [], lastServed: 0 };
      this.lines.set(key, line);
    }
    return line;
  }

  private start(line: Line): void {
    line.running++;
    this.running++;
    line.lastServed = ++this.served;
  }

  /** Fills free slots from the lines, the one served least recently first. */
  private next(): void {
    while (this.running < this.limits.slots) {
      let chosen: Line | undefined;
      for (const line of this.lines.values()) {
        if (line.waiting.length === 0 || line.running >= this.limits.perKey) continue;
        if (!chosen || line.lastServed < chosen.lastServed) chosen = line;
      }
      if (!chosen) return;
      this.waiting--;
      this.start(chosen);
      chosen.waiting.shift()!();
    }
  }
}
