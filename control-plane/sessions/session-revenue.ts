import { Prisma } from '../../generated/prisma/sqlite/client.js';
import { formatUsd } from '../../shared/money.js';
import type { Db } from '../db/client.js';
import { bigintOf, type Sql, sqlOf } from '../db/sql.js';

/**
 * The seller's revenue from sessions, split by how far each voucher charge's money has moved
 * (docs/decisions.md#D-307). Each charged voucher call is recorded (`SessionCharge`) with its
 * channel's charged total once it was added; claims and settles raise channels' totals to charged
 * totals, so a charge is wholly on one side of each: claimed once the channel's claimed total
 * reaches its position, settled once its settled total does.
 */

/** Records a voucher call's charge, in its settlement's transaction: `cumulative` is the channel's charged total after it. */
export async function recordSessionCharge(
  tx: Sql,
  attempt: { id: string; sellerId: string; channelId: string },
  chargedMicros: bigint,
  cumulative: bigint,
): Promise<void> {
  await tx.run(Prisma.sql`INSERT INTO "SessionCharge" ("attemptId", "sellerId", "channelId", "chargedMicros", "cumulative", "createdAt")
    VALUES (${attempt.id}, ${attempt.sellerId}, ${attempt.channelId}, ${chargedMicros}, ${cumulative}, ${new Date()})`);
}

/** The seller's voucher charges since `since`: in all, and unclaimed, claimed (not settled) and settled. */
export async function sessionRevenueFor(db: Db, sellerId: string, since: Date) {
  const row = await sqlOf(db).get<Record<'unclaimed' | 'claimed' | 'settled', unknown>>(Prisma.sql`SELECT
      CAST(SUM(CASE WHEN s."cumulative" > c."totalClaimed" THEN s."chargedMicros" ELSE 0 END) AS TEXT) AS "unclaimed",
      CAST(SUM(CASE WHEN s."cumulative" <= c."totalClaimed" AND s."cumulative" > c."totalSettled" THEN s."chargedMicros" ELSE 0 END) AS TEXT) AS "claimed",
      CAST(SUM(CASE WHEN s."cumulative" <= c."totalSettled" THEN s."chargedMicros" ELSE 0 END) AS TEXT) AS "settled"
    FROM "SessionCharge" s JOIN "SessionChannel" c ON c."id" = s."channelId"
    WHERE s."sellerId" = ${sellerId} AND s."createdAt" >= ${since}`);
  const of = (value: unknown) => (value === null || value === undefined ? 0n : bigintOf(value));
  const [unclaimed, claimed, settled] = [of(row?.unclaimed), of(row?.claimed), of(row?.settled)];
  return {
    chargedUsd: formatUsd(unclaimed + claimed + settled),
    unclaimedUsd: formatUsd(unclaimed),
    claimedUsd: formatUsd(claimed),
    settledUsd: formatUsd(settled),
  };
}
