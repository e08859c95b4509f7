import type { Prisma } from '../../generated/prisma/sqlite/client.js';
import type { Db } from '../db/client.js';
import { runEach, sqlOf } from '../db/sql.js';

/**
 * Group commit. Committing is most of what a write costs here (a transaction is a round trip to
 * begin and one to commit on PostgreSQL, and a durable commit is a flush to disk on either
 * database), so writes that arrive while a commit is running wait for it and then commit together,
 * in one transaction on the SQL lane (db/sql.ts), as statements that `statementsFor` makes for the
 * whole group (several writes' rows in one multi-row statement).
 * Under no load a write commits alone and at once; under load the groups grow by themselves.
 *
 * If a group fails (one write refused by a constraint), its writes are retried one by one, so
 * only the write at fault fails, with its own error.
 */
export type StatementsFor<Write> = (writes: readonly Write[]) => Prisma.Sql[];

type Waiting<Write> = { write: Write; resolve: () => void; reject: (err: unknown) => void };

/** Enough to amortize a commit; few enough that one refused write costs a bounded retry. */
const MAX_GROUP = 64;

export class GroupCommit<Write> {
  private waiting: Waiting<Write>[] = [];
  private flushing = false;

  constructor(
    private readonly db: Db,
    private readonly statementsFor: StatementsFor<Write>,
  ) {}

  /** Resolves once the write is committed; rejects with the error of this write alone. */
  commit(write: Write): Promise<void> {
    return new Promise((resolve, reject) => {
      this.waiting.push({ write, resolve, reject });
      if (!this.flushing) {
        // Flush after this turn of the event loop, so writes of requests that arrived together
        // start out in one group.
        this.flushing = true;
        setImmediate(() => void this.flush());
      }
    });
  }

  private run(writes: readonly Write[]): Promise<void> {
    const statements = this.statementsFor(writes);
    return sqlOf(this.db).transaction((tx) => runEach(tx, statements));
  }

  private async flush(): Promise<void> {
    try {
      while (this.waiting.length > 0) await this.commitGroup(this.waiting.splice(0, MAX_GROUP));
    } finally {
      this.flushing = false;
    }
  }

  private async commitGroup(group: Waiting<Write>[]): Promise<void> {
    if (group.length > 1) {
      try {
        await this.run(group.map((w) => w.write));
        for (const waiting of group) waiting.resolve();
        return;
      } catch {
        // Some write in the group was refused: commit each on its own to find which.
      }
    }
    for (const waiting of group) {
      try {
        await this.run([waiting.write]);
        waiting.resolve();
      } catch (err) {
        waiting.reject(err);
      }
    }
  }
}

const groups = new WeakMap<Db, Map<unknown, unknown>>();

/** The group commit of one kind of write (named by its `statementsFor`) on a database, made once. */
export function groupCommit<Write>(db: Db, statementsFor: StatementsFor<Write>): GroupCommit<Write> {
  let byKind = groups.get(db);
  if (!byKind) {
    byKind = new Map();
    groups.set(db, byKind);
  }
  let group = byKind.get(statementsFor) as GroupCommit<Write> | undefined;
  if (!group) {
    group = new GroupCommit(db, statementsFor);
    byKind.set(statementsFor, group);
  }
  return group;
}
