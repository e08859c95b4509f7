import type { Logger } from 'pino';
import { Prisma } from '../../generated/prisma/sqlite/client.js';
import type { CardPaymentsConfig } from '../../shared/config.js';
import { markCardRefunds, requestCardRefunds } from '../card-payments/card-refunds.js';
import type { Db } from '../db/client.js';
import { inList, sqlOf } from '../db/sql.js';
import { type Attempt, readAttempts } from '../payments/attempt-rows.js';
import { moveAttempt, moveAttempts } from '../payments/attempt-status.js';
import { type PaymentRails, railOf } from '../payments/rails.js';
import { returnAndRecord } from '../payments/settlement/hold.js';
import { settleAndRecord } from '../payments/settlement/record.js';
import { suspendUnpaidCapture } from '../storefront/pending-payments.js';

/**
 * What follows a delivered or failed account write (spec: States and transitions › Account write
 * delivery).
 *
 * Applied: the seller has the account. It becomes `active` for provisioning (when the newest
 * write is the one applied), and every payment reserved for it is captured. A capture that fails
 * (the signed authorization lapsed while the seller took its time) suspends the account, which
 * the seller hears in a new write: hub never leaves an account served that was not paid for.
 *
 * Failed for good: the seller never took the account as it stands (until the seller re-sends the
 * write, which ends the suspension once applied). Every payment still reserved
 * for it is released (nothing settles), the account is `failed` and suspended in hub (no write
 * says so: the seller did not take the last one). A payment already captured for an account the
 * seller never took is marked `refund_owed`: an x402 payment cannot be pulled back by hub, which
 * does not hold the seller's wallet, so the seller owes it (the management API shows it). A card
 * payment for what the seller never took is refunded through the card provider
 * (card-payments/card-refunds.ts).
 */

/** Payments to move on chain once the outcomes of a pass are recorded (`moveHeldMoney`). */
export type HeldMoney = {
  payOut: Attempt[];
  giveBack: Attempt[];
  /** Accounts whose write failed for good: their card payments marked for refund are refunded. */
  refundCards: string[];
};

/**
 * Writes the seller applied (each the newest of its account when taken). `markApplied` (statements
 * that record them applied) runs together with what it means for their accounts, all or none (one
 * statement on PostgreSQL: db/sql.ts › runAll). Answers the payments held for those accounts, to
 * be paid out once the pass has recorded every outcome.
 */
export async function writesApplied(
  db: Db,
  writes: readonly { accessId: string; stateVersion: number }[],
  markApplied: readonly Prisma.Sql[],
): Promise<Attempt[]> {
  const sql = sqlOf(db);
  const list = (values: readonly string[]) => inList(sql.provider, values);
  const accounts = list(writes.map((w) => w.accessId));
  // An account whose newest write was applied is the seller's; one re-sent after it failed ends
  // the failure's suspension, unless its payments were returned meanwhile (then paying again
  // resumes it). (An account's version is its newest write's: an account matches when its id and
  // version are a write's, found by its id.) The right of each SET reads the row as it was.
  const newest = list(writes.map((w) => `${w.accessId}:${w.stateVersion}`));
  await sql.runAll([
    ...markApplied,
    Prisma.sql`UPDATE "Access" SET "provisioningState" = 'active',
        "status" = CASE WHEN "provisioningState" = 'failed' AND NOT EXISTS (SELECT 1 FROM "PaymentAttempt" p
            WHERE p."accessId" = "Access"."id" AND p."status" IN ('releasing', 'released') AND p."refundTxHash" IS NOT NULL)
          THEN 'active' ELSE "status" END,
        "unappliedCreditMicros" = 0, "appliedPeriodEnd" = NULL,
        "updatedAt" = ${new Date()}
      WHERE "id" ${accounts} AND ("id" || ':' || "stateVersion") ${newest}`,
  ]);
  // Paid out only where the seller has the account as the payments bought it: a renewal held for
  // a newer write is paid out once that write is applied.
  return readAttempts(
    sql,
    Prisma.sql`"status" = 'reserved' AND "accessId" IN (SELECT "id" FROM "Access" WHERE "id" ${accounts} AND ("id" || ':' || "stateVersion") ${newest})`,
  );
}

/**
 * Moves what a pass's outcomes decided, after they are all recorded, each payment on the rail it
 * was made on: chain transactions take seconds each, and a pass that outlived its lease would find
 * its rows taken by another worker.
 */
export async function moveHeldMoney(
  db: Db,
  rails: PaymentRails,
  held: HeldMoney,
  logger: Logger,
  cards?: CardPaymentsConfig,
): Promise<void> {
  for (const attempt of held.payOut) {
    const accessId = attempt.accessId!;
    // Taking the payment to capture is conditional, so two workers never capture it twice.
    const taken = await moveAttempt(db, attempt.id, { to: 'settling', from: ['reserved'], set: { chargedMicros: attempt.amountMicros } });
    if (!taken) continue;
    // A capture that fails suspends the account (as it does when the pending loop settles it).
    const result = await settleAndRecord(db, railOf(rails, attempt), attempt, { whenCaptureFails: suspendUnpaidCapture });
    if (result.status === 'failed') {
      logger.warn(
        { accessId, paymentId: attempt.id, reason: result.reason },
        'capturing a reserved payment failed; the account is suspended',
      );
    }
  }
  for (const attempt of held.giveBack) await returnAndRecord(db, railOf(rails, attempt), attempt, logger);
  if (cards && held.refundCards.length) await requestCardRefunds(db, cards, logger, held.refundCards);
}

/**
 * A write failed for good: records what that means for its account, all or none, and answers the
 * payments held for it, to be returned once the pass has recorded every outcome.
 */
export async function writeFailed(db: Db, accessId: string, logger: Logger): Promise<Attempt[]> {
  const everApplied = (await db.accountWrite.count({ where: { accessId, kind: 'write', status: 'applied' } })) > 0;
  await db.$transaction(async (tx) => {
    // Held in the escrow: returned to the payer (below). A reservation that moved no money (made
    // before holds existed) is only released.
    const returned =
      (await moveAttempts(tx, { accessId, held: true }, { to: 'releasing', from: ['reserved'] })) +
      (await moveAttempts(tx, { accessId }, { to: 'released', from: ['reserved'], set: { chargedMicros: 0n } }));
    // Paid on chain: owed by the seller. Paid by card: refunded through the provider (moveHeldMoney).
    if (!everApplied) await moveAttempts(tx, { accessId, paidOnChain: true }, { to: 'refund_owed' });
    await markCardRefunds(tx, accessId);
    // What the changes the seller never took added goes back with their payments: the credit (never
    // drawn on) and the period, to where the seller has it. Nothing paid, nothing taken back: a
    // free account's write the seller re-sends later still brings it back whole.
    const account = await tx.access.findUniqueOrThrow({ where: { id: accessId } });
    const taken = returned > 0 ? account.unappliedCreditMicros : 0n;
    await tx.access.update({
      where: { id: accessId },
      data: {
        provisioningState: 'failed',
        status: 'suspended',
        unappliedCreditMicros: account.unappliedCreditMicros - taken,
        balanceMicros: account.balanceMicros - taken,
        ...(account.creditGrantedMicros !== null ? { creditGrantedMicros: account.creditGrantedMicros - taken } : {}),
        ...(returned > 0 && account.appliedPeriodEnd ? { periodEnd: account.appliedPeriodEnd, appliedPeriodEnd: null } : {}),
      },
    });
  });
  const returning = await readAttempts(sqlOf(db), Prisma.sql`"accessId" = ${accessId} AND "status" = 'releasing'`);
  logger.warn({ accessId, returning: returning.length }, 'account write failed for good: held payments go back to their payers');
  return returning;
}
