import type { Prisma } from '../../generated/prisma/sqlite/client.js';
import { Batches } from '../db/batches.js';
import type { Db } from '../db/client.js';
import { sqlOf } from '../db/sql.js';

/**
 * Group commit. Committing is most of what a write costs here (a transaction is a round trip to
 * begin and one to commit on PostgreSQL, and a durable commit is a flush to disk on either
 * database), so writes that arrive while a commit is running wait for it and then commit together,
 * all or none on the SQL lane (db/sql.ts › `runAll`: one statement on PostgreSQL), as statements
 * that `statementsFor` makes for the whole group (several writes' rows in one multi-row statement).
 * Under no load a write commits alone and at once; under load the groups grow by themselves.
 *
 * If a group fails (one write refused by a constraint), its writes are retried one by one, so
 * only the write at fault fails, with its own error (db/batches.ts).
 */
export type StatementsFor<Write> = (writes: readonly Write[]) => Prisma.Sql[];

/** Enough to amortize a commit; few enough that one refused write costs a bounded retry. */
const MAX_GROUP = 64;

export class GroupCommit<Write> {
  private readonly batches: Batches<Write, undefined>;

  constructor(db: Db, statementsFor: StatementsFor<Write>) {
    // One group at a time: the next gathers while this one commits.
    this.batches = new Batches(
      async (writes) => {
        await sqlOf(db).runAll(statementsFor(writes));
        return writes.map(() => undefined);
      },
      { maxBatch: MAX_GROUP, maxInFlight: 1 },
    );
  }

  /** Resolves once the write is committed; rejects with the error of this write alone. */
  commit(write: Write): Promise<void> {
    return this.batches.add(write);
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
