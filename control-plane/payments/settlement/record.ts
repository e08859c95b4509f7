import { Prisma } from '../../../generated/prisma/sqlite/client.js';
import { microsToTokenUnits } from '../../../shared/money.js';
import { paymentPayloadSchema } from '../../../shared/payments/x402-wire.js';
import { countTransaction } from '../../analytics/traffic-rollup.js';
import type { Db } from '../../db/client.js';
import { sqlOf } from '../../db/sql.js';
import { SAYS_NOTHING_OF_EARLIER } from '../../facilitator/results.js';
import { moveAttempt, noteAttempt } from '../attempt-status.js';
import { creditRemainder } from '../credit.js';
import type { PaymentRail } from '../rail.js';
import { attemptRequirements } from '../requirements.js';
import { answeredWithin, whileSubmitting } from './under-way.js';

/** An attempt marked `settling`, with what its settlement charges. */
export type Settleable = {
  id: string;
  sellerId: string;
  createdAt: Date;
  amountMicros: bigint;
  /** What the settlement charges; the whole amount when not set. */
  chargedMicros: bigint | null;
  payer: string | null;
  payTo: string | null;
  /** Set when `payTo` is the escrow: the seller's wallet it pays out to. */
  payoutTo: string | null;
  /** Set before settlement only for a captured reservation: the account it pays for. */
  accessId?: string | null;
  /** Set when the payment was moved into the escrow already (a held purchase): only its payout is left. */
  holdTxHash?: string | null;
  paymentPayloadJson: string | null;
  network: string | null;
};

/**
 * What follows a settlement that failed for good, in the transaction that records it: a captured
 * reservation's account was not paid for (storefront/account-changes.ts › suspendUnpaid). Passed
 * in by whoever settles captures, so payments never reach into accounts.
 */
export type WhenCaptureFails = (db: Db, accessId: string) => Promise<void>;

export type RecordOptions = {
  /** An earlier submission's answer was lost: a failure that says nothing of it leaves the attempt settling. */
  again?: boolean;
  whenCaptureFails?: WhenCaptureFails;
};

/**
 * Submits the settlement of an attempt already marked `settling` (with what it charges) and
 * records how it ended: `failed` with its reason and nothing charged, `settled` with the
 * transaction, or still `settling` (the outcome is not known yet; the pending loop tries again).
 * Every settlement, of a call, a purchase or a captured reservation, ends here.
 */
export async function settleAndRecord(db: Db, rail: PaymentRail | undefined, attempt: Settleable, options: RecordOptions = {}) {
  const result = await whileSubmitting(rail, attempt.id, () => submitSettlement(rail, attempt));
  const sql = sqlOf(db);
  // Another settlement of the same attempt (the pending loop, another control-plane) may have
  // recorded it settled meanwhile: that record stands.
  if (result.status === 'failed' && options.again && SAYS_NOTHING_OF_EARLIER.has(result.reason)) return result;
  // A held payment is in the escrow: its payout is tried again (the pending loop) until it goes,
  // never recorded failed, which would leave the money there with no one to pay.
  if (result.status === 'failed' && attempt.holdTxHash) return result;
  if (result.status === 'failed') {
    const failed = await moveAttempt(sql, attempt.id, {
      to: 'failed',
      set: { settlementReason: result.reason, chargedMicros: 0n },
    });
    const { accessId } = attempt;
    if (failed && accessId && options.whenCaptureFails) await options.whenCaptureFails(db, accessId);
    return result;
  }
  if (result.status !== 'settled') {
    // Parked: `settling`, marked with why the outcome cannot be told; the pending loop leaves it.
    const parked = result.unresolvable ? 'outcome_unknown' : null;
    await noteAttempt(sql, attempt.id, {
      while: 'settling',
      set: { settleTxHash: result.transaction, settlementReason: parked ?? undefined },
    });
    return result;
  }
  // Marked settled once (two control-planes can finish the same settlement), and counted then.
  await sql.transaction(async (tx) => {
    const charged = attempt.chargedMicros ?? attempt.amountMicros;
    // Over a `failed` another settlement recorded first (which zeroed the charge), the charge is back.
    const settled = await moveAttempt(tx, attempt.id, {
      to: 'settled',
      set: {
        settledAt: new Date(),
        chargedMicros: charged,
        settlementReason: null,
        settleTxHash: Prisma.sql`COALESCE(${result.transaction ?? null}, "settleTxHash")`,
      },
    });
    if (!settled) return;
    // The escrow returned the remainder on chain; only a payment to the seller leaves one to credit.
    if (!attempt.payoutTo) await creditRemainder(tx, attempt);
    await countTransaction(tx, { ...attempt, chargedMicros: charged });
  });
  return result;
}

/** `settleAndRecord`, waited for at most as long as the proxy waits (`answeredWithin`); undefined past that. */
export function settleInTime(db: Db, rail: PaymentRail | undefined, attempt: Settleable) {
  return answeredWithin(settleAndRecord(db, rail, attempt));
}

/**
 * An attempt that cannot be submitted: made on a rail this hub no longer has (`rail_not_configured`,
 * rails.ts › railOf), or naming no payment to submit, or no escrow on its rail to pay it out.
 */
export type Unsettleable = {
  status: 'failed';
  reason: 'payment_not_settleable' | 'rail_not_configured';
  network: string;
  transaction?: undefined;
};

export function unsettleable(rail: PaymentRail | undefined, attempt: { network: string | null }): Unsettleable {
  return { status: 'failed', reason: rail ? 'payment_not_settleable' : 'rail_not_configured', network: attempt.network ?? '' };
}

async function submitSettlement(rail: PaymentRail | undefined, attempt: Settleable) {
  // An escrowed payment needs a rail with the escrow to pay it out.
  if (!rail || !attempt.payTo || !attempt.paymentPayloadJson || (attempt.payoutTo && !rail.escrow)) return unsettleable(rail, attempt);
  const payload = paymentPayloadSchema.parse(JSON.parse(attempt.paymentPayloadJson));
  const requirements = attemptRequirements(rail, { id: attempt.id, amountMicros: attempt.amountMicros, payTo: attempt.payTo });
  if (attempt.payoutTo && rail.escrow) {
    const charged = microsToTokenUnits(attempt.chargedMicros ?? attempt.amountMicros, rail.token.decimals);
    const deposited = Boolean(attempt.holdTxHash);
    return rail.escrow.settle(payload, requirements, { payee: attempt.payoutTo as `0x${string}`, charged, deposited });
  }
  return rail.facilitator.settle(payload, requirements);
}
