import { openDatabase } from '../../control-plane/db/client.js';
import type { DatabaseConfig } from '../../shared/config.js';

type Tap = { teardown: (fn: () => unknown) => void };

/**
 * Races made deterministic on PostgreSQL: another connection holds a row for update, so the two
 * sides of a race each get as far as they can and wait; released together, they race for real.
 * The last-admin test (test/control-plane/accounts/last-admin.test.ts) is the pattern.
 */
export async function rowLocks(t: Tap, database: DatabaseConfig) {
  const watcher = await openDatabase(database, { poolSize: 1 });
  t.teardown(() => watcher.close());

  /** Statements waiting for a lock now, of those whose text holds `text` when given. */
  const waiting = async (text = '') => {
    const [row] = await watcher.db.$queryRaw<{ n: number }[]>`
      SELECT count(*)::int AS n FROM pg_stat_activity
      WHERE datname = current_database() AND wait_event_type = 'Lock' AND query LIKE ${`%${text}%`}`;
    return row!.n;
  };

  /** Holds the rows of `table` where `column` is `value` until `release` is called; resolves once held. */
  const hold = async (table: string, column: string, value: string) => {
    const holder = await openDatabase(database, { poolSize: 1 });
    t.teardown(() => holder.close());
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    let held!: () => void;
    const holding = new Promise<void>((resolve) => (held = resolve));
    const done = holder.db.$transaction(
      async (tx) => {
        await tx.$queryRawUnsafe(`SELECT 1 FROM "${table}" WHERE "${column}" = $1 FOR UPDATE`, value);
        held();
        await released;
      },
      { timeout: 20_000 },
    );
    await Promise.race([holding, done]);
    /** Lets the waiting statements go; resolves once the holding transaction has ended. */
    return async () => {
      release();
      await done;
    };
  };

  return { waiting, hold };
}

/** Polls `condition` every 10 ms, at most 5 s; throws naming `what` if it never holds. */
export async function until(condition: () => Promise<boolean> | boolean, what: string): Promise<void> {
  for (let tries = 0; !(await condition()); tries++) {
    if (tries > 500) throw new Error(`${what} never happened`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/** A request under way, and whether it has been answered yet. */
export function underWay<T>(request: Promise<T>): { answered: boolean; response: Promise<T> } {
  const state = { answered: false, response: request.finally(() => (state.answered = true)) };
  return state;
}
