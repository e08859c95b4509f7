import { Prisma } from '../../generated/prisma/sqlite/client.js';
import type { Sql } from '../db/sql.js';
import { bucketOf } from './time-buckets.js';

/** Each count goes to both grains: a window sums quarter-hours up to its first whole UTC day, then days. */
const GRAINS = ['quarter', 'day'] as const;
type Grain = (typeof GRAINS)[number];

/**
 * Seller analytics counted as they happen, into a row per seller and UTC quarter-hour and one per
 * seller and UTC day (`SellerStat`), by the same writes that record them. What is counted is defined in
 * docs/decisions.md › Analytics:
 * - a call when hub delivers the seller's answer (recordRequests),
 * - an attempt when a priced challenge is issued (newAttempt),
 * - a transaction, its revenue and, for a payer's first, a new wallet when a payment settles
 *   (settleAndRecord), in the quarter-hour its challenge was issued so a rate never passes 1.
 *
 * Lock order: these rows are shared by every call of a seller, so each transaction counts last,
 * after the rows it writes for the call itself (the attempt, the payer's credit, the request's
 * record), and locks a seller's rows in one order (by seller, grain as in GRAINS, bucket). On
 * PostgreSQL a transaction that held a count while it waited for a request's record, which the
 * proxy's batch held while it waited for the count, would deadlock.
 */

/** Adds delivered calls, given per seller and instant; several of one bucket are summed first. */
export function countCalls(tx: Pick<Sql, 'run'>, calls: { sellerId: string; at: Date | number; count: number }[]) {
  const summed = new Map<string, { sellerId: string; grain: Grain; bucket: number; count: number }>();
  for (const c of calls) {
    for (const grain of GRAINS) {
      const bucket = bucketOf(grain, c.at);
      const key = `${c.sellerId} ${grain} ${bucket}`;
      const seen = summed.get(key);
      if (seen) seen.count += c.count;
      else summed.set(key, { sellerId: c.sellerId, grain, bucket, count: c.count });
    }
  }
  if (summed.size === 0) return Promise.resolve(0);
  const inLockOrder = [...summed.values()].sort(
    (a, b) =>
      (a.sellerId < b.sellerId ? -1 : a.sellerId > b.sellerId ? 1 : 0) ||
      GRAINS.indexOf(a.grain) - GRAINS.indexOf(b.grain) ||
      a.bucket - b.bucket,
  );
  const rows = inLockOrder.map((r) => Prisma.sql`(${r.sellerId}, ${r.grain}, ${r.bucket}, ${r.count})`);
  return tx.run(Prisma.sql`INSERT INTO "SellerStat" ("sellerId", "grain", "bucket", "calls") VALUES ${Prisma.join(rows)}
    ON CONFLICT ("sellerId", "grain", "bucket") DO UPDATE SET "calls" = "SellerStat"."calls" + excluded."calls"`);
}

/** Counts one priced challenge; a statement for the transaction that records it. */
export function countAttempt(sellerId: string, issuedAt: Date): Prisma.Sql {
  const rows = GRAINS.map((grain) => Prisma.sql`(${sellerId}, ${grain}, ${bucketOf(grain, issuedAt)}, 1)`);
  return Prisma.sql`INSERT INTO "SellerStat" ("sellerId", "grain", "bucket", "attempts") VALUES ${Prisma.join(rows)}
    ON CONFLICT ("sellerId", "grain", "bucket") DO UPDATE SET "attempts" = "SellerStat"."attempts" + 1`;
}

/**
 * Counts one settled payment: a transaction, its charge, and a new wallet when the payer never
 * paid this seller before. Run in the transaction that marks the payment settled, once.
 */
export async function countTransaction(
  tx: Sql,
  payment: { sellerId: string; createdAt: Date; chargedMicros: bigint; payer: string | null },
): Promise<void> {
  const newWallet = payment.payer
    ? await tx.run(Prisma.sql`INSERT INTO "SellerWallet" ("sellerId", "wallet", "firstPaidAt") VALUES (${payment.sellerId}, ${payment.payer.toLowerCase()}, ${payment.createdAt})
        ON CONFLICT ("sellerId", "wallet") DO NOTHING`)
    : 0;
  const rows = GRAINS.map(
    (grain) =>
      Prisma.sql`(${payment.sellerId}, ${grain}, ${bucketOf(grain, payment.createdAt)}, 1, ${payment.chargedMicros}, ${newWallet})`,
  );
  await tx.run(Prisma.sql`INSERT INTO "SellerStat" ("sellerId", "grain", "bucket", "transactions", "revenueMicros", "newWallets")
    VALUES ${Prisma.join(rows)}
    ON CONFLICT ("sellerId", "grain", "bucket") DO UPDATE SET "transactions" = "SellerStat"."transactions" + 1,
      "revenueMicros" = "SellerStat"."revenueMicros" + excluded."revenueMicros", "newWallets" = "SellerStat"."newWallets" + excluded."newWallets"`);
}
