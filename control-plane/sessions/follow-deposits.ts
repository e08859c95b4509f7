import type { Hex } from 'viem';
import { Prisma } from '../../generated/prisma/sqlite/client.js';
import type { Db } from '../db/client.js';
import { bigintOf, dateOf, sqlOf } from '../db/sql.js';
import type { PaymentRail } from '../payments/rail.js';
import { FOLLOW_GIVE_UP_MS, recordOutcome } from './session-transactions.js';

/** How long a deposit's record stays open before the worker looks for it on chain: past the payer's own resend. */
export const LOST_DEPOSIT_AFTER_MS = 2 * 60_000;

/** Deposits looked at in one round at most. */
const DEPOSITS_PER_ROUND = 50;

/**
 * Deposits whose outcome was lost and whose payer did not send them again (docs/decisions.md#D-358):
 * a `deposit` record still `sending` or `sent` after `afterMs`. Its channel's balance on chain above
 * hub's mirror means money arrived that hub does not count: the mirror takes the chain's balance
 * (while no call holds the channel: a call's own deposit may be mirroring it), so the payer's next
 * voucher, the idle refund (D-334) and claims all see it, and the record is closed as mined. A
 * record whose channel shows nothing new after `FOLLOW_GIVE_UP_MS` is closed as failed (the same
 * deposit sent again reopens it, D-337).
 */
export async function followLostDeposits(
  db: Db,
  rail: PaymentRail | undefined,
  afterMs = LOST_DEPOSIT_AFTER_MS,
): Promise<{ landed: number; failed: number }> {
  const sessions = rail?.sessions;
  const result = { landed: 0, failed: 0 };
  if (!rail || !sessions) return result;
  const sql = sqlOf(db);
  const now = Date.now();
  const open = await sql.all<{ id: string; itemsJson: string; transaction: string | null; createdAt: unknown }>(Prisma.sql`SELECT
      "id", "itemsJson", "transaction", "createdAt" FROM "SessionTransaction"
    WHERE "network" = ${rail.network} AND "kind" = 'deposit' AND "status" IN ('sending', 'sent') AND "createdAt" < ${new Date(now - afterMs)}
    ORDER BY "createdAt" LIMIT ${DEPOSITS_PER_ROUND}`);
  for (const record of open) {
    const { channelId } = JSON.parse(record.itemsJson) as { channelId: Hex };
    const mirror = await sql.get<{ balance: unknown }>(Prisma.sql`SELECT "balance" FROM "SessionChannel"
      WHERE "id" = ${channelId} AND ("heldBy" IS NULL OR "heldUntil" < ${new Date()})`);
    if (!mirror) continue;
    const mirrored = bigintOf(mirror.balance);
    const onChain = await sessions.channel(channelId);
    if (onChain.balance > mirrored) {
      // Only over the balance read: a deposit mirrored meanwhile changed it, and stands.
      await recordOutcome(sql, record.id, { status: 'mined', transaction: record.transaction }, async (tx) => {
        await tx.run(Prisma.sql`UPDATE "SessionChannel" SET "balance" = ${onChain.balance}, "updatedAt" = ${new Date()}
          WHERE "id" = ${channelId} AND "balance" = ${mirrored}`);
      });
      result.landed++;
    } else if (now - +dateOf(record.createdAt) > FOLLOW_GIVE_UP_MS) {
      await recordOutcome(
        sql,
        record.id,
        { status: 'failed', message: `not seen on chain within ${FOLLOW_GIVE_UP_MS} ms` },
        async () => {},
      );
      result.failed++;
    }
  }
  return result;
}
