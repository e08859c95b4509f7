import { Prisma } from '../../generated/prisma/sqlite/client.js';
import { RateWindow, secondsUntilTurn, windowStartOf } from '../../runtime/rate-window.js';
import type { Db } from '../db/client.js';
import { inList, sqlOf } from '../db/sql.js';

/** Counts requests of a kind per key (an organization) in one-minute windows. */
export interface RateLimit {
  /** Counts one request for `key`: undefined when allowed, else the seconds until the window turns. */
  take(key: string, now?: number): number | undefined;
}

const limits = new WeakMap<Db, Map<string, RateLimit>>();

/**
 * The rate limit `name` of a database, made once per client: on PostgreSQL shared by every
 * control-plane that uses it (`SharedRateWindow`), on SQLite, one process's database, in memory.
 */
export function rateLimit(db: Db, name: string, perMinute: number): RateLimit {
  let byName = limits.get(db);
  if (!byName) {
    byName = new Map();
    limits.set(db, byName);
  }
  let limit = byName.get(name);
  if (!limit) {
    limit = sqlOf(db).provider === 'postgresql' ? new SharedRateWindow(db, name, perMinute) : new RateWindow(perMinute);
    byName.set(name, limit);
  }
  return limit;
}

/**
 * A rate limit every replica counts toward, through one row per key and window in PostgreSQL.
 * `take` answers at once from what this process knows: every replica's count as last read, plus
 * its own not yet added; a loop adds its own every `syncMs` and reads the others' (at once for a
 * key it had not counted yet). A limit is therefore exceeded by at most what the other replicas
 * let through before their next pass, and the request path never waits on the database.
 */
export class SharedRateWindow implements RateLimit {
  private windowStart = 0;
  /** Every replica's count per key in this window, as last read (this one's included once added). */
  private readonly counted = new Map<string, number>();
  /** This process's count not yet added to the shared one. */
  private readonly pending = new Map<string, number>();
  private timer: NodeJS.Timeout | undefined;
  /** Passes run one after another: two at once would add the same counts twice. */
  private passes: Promise<void> = Promise.resolve();
  private passesWaiting = 0;

  constructor(
    private readonly db: Db,
    private readonly name: string,
    private readonly limit: number,
    private readonly options = { windowMs: 60_000, syncMs: 250 },
  ) {}

  take(key: string, now = Date.now()): number | undefined {
    this.turn(now);
    const used = (this.counted.get(key) ?? 0) + (this.pending.get(key) ?? 0);
    if (used >= this.limit) return secondsUntilTurn(this.windowStart, this.options.windowMs, now);
    this.pending.set(key, (this.pending.get(key) ?? 0) + 1);
    // The loop's pass is skipped while another waits: a slow database never queues them up.
    this.timer ??= setInterval(() => this.passesWaiting === 0 && void this.sync().catch(() => {}), this.options.syncMs).unref();
    // A key this process has not counted yet: the others' counts are read at once, not a pass later.
    if (!this.counted.has(key)) {
      this.counted.set(key, 0);
      void this.sync(now).catch(() => {});
    }
    return undefined;
  }

  /** Adds this process's counts to the shared ones and reads every count of the keys it knows. */
  sync(now?: number): Promise<void> {
    this.passesWaiting++;
    const pass = this.passes.then(() => this.pass(now ?? Date.now())).finally(() => this.passesWaiting--);
    this.passes = pass.catch(() => {});
    return pass;
  }

  private async pass(now: number): Promise<void> {
    this.turn(now);
    const windowStart = this.windowStart;
    const window = new Date(windowStart);
    const sql = sqlOf(this.db);
    for (const [key, count] of [...this.pending]) {
      await sql.run(Prisma.sql`
        INSERT INTO "RateCount" ("name", "key", "windowStart", "count") VALUES (${this.name}, ${key}, ${window}, ${count})
        ON CONFLICT ("name", "key", "windowStart") DO UPDATE SET "count" = "RateCount"."count" + excluded."count"`);
      if (this.windowStart !== windowStart) return;
      // Moved from this process's count to the shared one in one step: `take` never sees it in neither.
      this.pending.set(key, (this.pending.get(key) ?? 0) - count);
      this.counted.set(key, (this.counted.get(key) ?? 0) + count);
    }
    const keys = [...this.counted.keys()];
    if (keys.length === 0) return;
    const rows = await sql.all<{ key: string; count: unknown }>(Prisma.sql`
      SELECT "key", "count" FROM "RateCount" WHERE "name" = ${this.name} AND "windowStart" = ${window} AND "key" ${inList(sql.provider, keys)}`);
    if (this.windowStart === windowStart) for (const row of rows) this.counted.set(row.key, Number(row.count));
  }

  /** A new window starts from nothing; the rows of windows past are removed once a window turns. */
  private turn(now: number): void {
    const start = windowStartOf(now, this.options.windowMs);
    if (start === this.windowStart) return;
    const previous = this.windowStart;
    this.windowStart = start;
    this.counted.clear();
    this.pending.clear();
    if (previous !== 0) {
      void sqlOf(this.db)
        .run(Prisma.sql`DELETE FROM "RateCount" WHERE "name" = ${this.name} AND "windowStart" < ${new Date(start)}`)
        .catch(() => {});
    }
    if (this.timer) {
      clearInterval(this.timer);
      this.timer = undefined;
    }
  }
}
