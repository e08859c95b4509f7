import { Prisma } from '../../generated/prisma/sqlite/client.js';
import { within } from '../../runtime/within.js';
import { newId } from '../../shared/ids.js';
import type { Sql } from '../db/sql.js';
import { bigintOf } from '../db/sql.js';
import { FacilitatorUnavailableError } from '../facilitator/facilitator.js';
import type { CallOutcome } from '../facilitator/local-facilitator.js';

/**
 * The durable record of each transaction hub sends for sessions (`SessionTransaction`): a claim or
 * a settle is written, with what it does, before it is sent; its hash once the send returns; and
 * `mined` or `failed` once its outcome is known. While one is open (sending or sent) on a network
 * no other is sent there, by any control-plane: `openKey` is unique, and set to the network until
 * the record closes. A record left open by a process that stopped is followed by the next round
 * (follow-transactions.ts), never sent again. A payer's deposit is recorded here too, outside the
 * network's slot (its own `openKey`, session-deposit.ts).
 */

export type SessionTransactionKind = 'claim' | 'settle' | 'refund';

/**
 * How long a transaction that left no known outcome (its sender stopped, or the chain kept its
 * receipt) is waited for before it counts as failed and its channels may be claimed again. Should
 * it land after that, nothing is paid twice: a claim row at the total already claimed changes
 * nothing and one below it reverts, and a settle sends only what is claimed and not yet sent.
 */
export const FOLLOW_GIVE_UP_MS = 600_000;

export type OpenTransaction = {
  id: string;
  kind: SessionTransactionKind;
  status: 'sending' | 'sent';
  transaction: string | null;
  items: unknown;
  amount: bigint;
  createdAt: Date;
};

/**
 * Takes the network's one open slot with a record of a transaction about to be sent (what it does
 * is written by `describeSessionTransaction` before it is sent); undefined when another is open.
 */
export async function openSessionTransaction(sql: Sql, network: string, kind: SessionTransactionKind): Promise<string | undefined> {
  const id = newId('sessionTransaction');
  const now = new Date();
  const written = await sql.run(Prisma.sql`INSERT INTO "SessionTransaction" ("id", "network", "kind", "status", "openKey", "itemsJson",
      "amount", "createdAt", "updatedAt")
    VALUES (${id}, ${network}, ${kind}, 'sending', ${network}, '[]', ${0n}, ${now}, ${now})
    ON CONFLICT ("openKey") DO NOTHING`);
  return written === 1 ? id : undefined;
}

/** How often a request waiting for the network's slot follows the open transaction from the chain. */
const FOLLOW_EVERY_MS = 1_000;

/**
 * Takes the network's open slot as `openSessionTransaction` does, waiting up to `waitMs` for the
 * transaction open there to close (its sender's outcome comes, or `follow` finds it landed: one a
 * stopped process left open need not wait for the worker's next round); undefined when it did not
 * in time. `follow` failing (the chain unreadable) only means waiting on.
 */
export async function waitForNetworkSlot(
  sql: Sql,
  network: string,
  kind: SessionTransactionKind,
  waitMs: number,
  follow: () => Promise<unknown>,
): Promise<string | undefined> {
  const deadline = Date.now() + waitMs;
  let followedAt = 0;
  for (;;) {
    const id = await openSessionTransaction(sql, network, kind);
    if (id || Date.now() > deadline) return id;
    // At most once a second, and never past the deadline: each look is a read of the chain per channel.
    if (Date.now() - followedAt >= FOLLOW_EVERY_MS) {
      followedAt = Date.now();
      await within(
        follow().catch(() => undefined),
        Math.max(0, deadline - Date.now()),
      );
    }
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** Writes what the open transaction does (amounts as decimal strings), before it is sent. */
export async function describeSessionTransaction(sql: Sql, id: string, items: unknown, amount: bigint): Promise<void> {
  const itemsJson = JSON.stringify(items, (_, v) => (typeof v === 'bigint' ? v.toString() : v));
  await sql.run(Prisma.sql`UPDATE "SessionTransaction" SET "itemsJson" = ${itemsJson}, "amount" = ${amount}, "updatedAt" = ${new Date()}
    WHERE "id" = ${id}`);
}

/**
 * Sends the recorded transaction and writes how it ended (`recordOutcome`). The chain not
 * answering before anything was sent fails the record; any other error leaves it open, since the
 * transaction may have gone out: the next round follows it.
 */
export async function sendRecorded(
  sql: Parameters<typeof recordOutcome>[0],
  id: string,
  send: () => Promise<CallOutcome>,
  apply: (tx: Sql, transaction: string | null) => Promise<void>,
): Promise<CallOutcome> {
  let outcome: CallOutcome;
  try {
    outcome = await send();
  } catch (err) {
    if (err instanceof FacilitatorUnavailableError) await recordOutcome(sql, id, { status: 'failed', message: err.message }, apply);
    throw err;
  }
  await recordOutcome(sql, id, outcome, apply);
  return outcome;
}

/** The transaction open on the network, if any. */
export async function openTransactionOn(sql: Sql, network: string): Promise<OpenTransaction | undefined> {
  const row = await sql.get<Record<string, unknown>>(
    Prisma.sql`SELECT "id", "kind", "status", "transaction", "itemsJson", "amount", "createdAt" FROM "SessionTransaction" WHERE "openKey" = ${network}`,
  );
  if (!row) return undefined;
  return {
    id: row.id as string,
    kind: row.kind as SessionTransactionKind,
    status: row.status as OpenTransaction['status'],
    transaction: (row.transaction ?? null) as string | null,
    items: JSON.parse(row.itemsJson as string),
    amount: bigintOf(row.amount),
    createdAt: new Date(row.createdAt as string | Date),
  };
}

/**
 * Writes how the send ended: mined, failed (refused, nothing sent; or reverted), or sent with its
 * outcome unknown (the record stays open, with the hash, for the next round to follow). True when
 * the record closed as mined here: `apply` ran, in the same transaction (the mirror follows a
 * mined transaction once, whoever saw it mined first).
 */
export async function recordOutcome(
  sql: Sql & { transaction<T>(work: (tx: Sql) => Promise<T>): Promise<T> },
  id: string,
  outcome: CallOutcome | { status: 'failed'; message: string } | { status: 'mined'; transaction: string | null },
  apply: (tx: Sql, transaction: string | null) => Promise<void>,
): Promise<boolean> {
  const now = new Date();
  const transaction = 'transaction' in outcome ? (outcome.transaction ?? null) : null;
  if (outcome.status === 'unknown') {
    await sql.run(Prisma.sql`UPDATE "SessionTransaction" SET "status" = 'sent', "transaction" = ${transaction}, "error" = ${outcome.message},
      "updatedAt" = ${now} WHERE "id" = ${id} AND "openKey" IS NOT NULL`);
    return false;
  }
  if (outcome.status === 'mined') {
    return sql.transaction(async (tx) => {
      const closed = await tx.run(Prisma.sql`UPDATE "SessionTransaction" SET "status" = 'mined', "openKey" = NULL,
          "transaction" = COALESCE(${transaction}, "transaction"), "updatedAt" = ${now}
        WHERE "id" = ${id} AND "openKey" IS NOT NULL`);
      if (closed === 1) await apply(tx, transaction);
      return closed === 1;
    });
  }
  const error = outcome.status === 'reverted' ? 'reverted' : outcome.message;
  await sql.run(Prisma.sql`UPDATE "SessionTransaction" SET "status" = 'failed', "openKey" = NULL,
      "transaction" = COALESCE(${transaction}, "transaction"), "error" = ${error}, "updatedAt" = ${now}
    WHERE "id" = ${id} AND "openKey" IS NOT NULL`);
  return false;
}

/** Lets go of a record written for a round that found nothing to send after all. */
export async function dropSessionTransaction(sql: Sql, id: string): Promise<void> {
  await sql.run(Prisma.sql`DELETE FROM "SessionTransaction" WHERE "id" = ${id} AND "status" = 'sending'`);
}
