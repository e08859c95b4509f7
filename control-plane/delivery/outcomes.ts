import type { Logger } from 'pino';
import type { Db } from '../db/client.js';
import { moveAttempt, moveAttempts } from '../payments/attempt-status.js';
import type { PaymentRail } from '../payments/rail.js';
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
 * does not hold the seller's wallet, so the seller owes it (the management API shows it).
 */

/** Writes the seller applied (each the newest of its account when taken). */
export async function writesApplied(
  db: Db,
  rail: PaymentRail | undefined,
  writes: readonly { accessId: string; stateVersion: number }[],
  logger: Logger,
): Promise<void> {
  // An account whose newest write was applied is the seller's; one re-sent after it failed ends
  // the failure's suspension. (An account's version is its newest write's.)
  const newest = writes.map((w) => ({ id: w.accessId, stateVersion: w.stateVersion }));
  await db.access.updateMany({ where: { provisioningState: 'failed', OR: newest }, data: { status: 'active' } });
  await db.access.updateMany({ where: { OR: newest }, data: { provisioningState: 'active' } });
  const reserved = await db.paymentAttempt.findMany({ where: { accessId: { in: writes.map((w) => w.accessId) }, status: 'reserved' } });
  for (const attempt of reserved) {
    const accessId = attempt.accessId!;
    // Taking the payment to capture is conditional, so two workers never capture it twice.
    const taken = await moveAttempt(db, attempt.id, { to: 'settling', from: ['reserved'], set: { chargedMicros: attempt.amountMicros } });
    if (!taken) continue;
    // A capture that fails suspends the account (as it does when the pending loop settles it).
    const result = await settleAndRecord(db, rail, attempt, { whenCaptureFails: suspendUnpaidCapture });
    if (result.status === 'failed') {
      logger.warn(
        { accessId, paymentId: attempt.id, reason: result.reason },
        'capturing a reserved payment failed; the account is suspended',
      );
    }
  }
}

export async function writeFailed(db: Db, accessId: string, logger: Logger): Promise<void> {
  const everApplied = (await db.accountWrite.count({ where: { accessId, kind: 'write', status: 'applied' } })) > 0;
  await db.$transaction(async (tx) => {
    await moveAttempts(tx, { accessId }, { to: 'released', from: ['reserved'], set: { chargedMicros: 0n } });
    if (!everApplied) await moveAttempts(tx, { accessId }, { to: 'refund_owed' });
    await tx.access.update({ where: { id: accessId }, data: { provisioningState: 'failed', status: 'suspended' } });
  });
  logger.warn({ accessId }, 'account write failed for good: reserved payments released');
}
