import type { Prisma } from '../../generated/prisma/sqlite/client.js';
import { ApiError } from '../../shared/errors.js';
import { formatUsd } from '../../shared/money.js';
import { reverseCredit } from '../card-payments/credit-reversal.js';
import type { Db } from '../db/client.js';
import { refuseLive } from './sandbox-seller.js';

type Tx = Prisma.TransactionClient;

export type DisputeStatus = 'open' | 'won' | 'lost';

/** A sandbox payment with what was pulled back from it, as the sandbox payment routes answer. */
export type ReversedPayment = {
  paymentId: string;
  accessId: string;
  amountUsd: string;
  refundedUsd: string;
  disputeStatus: DisputeStatus | null;
  disputeLostUsd: string;
  /** The account's cumulative `creditReversedUsd` after this reversal. */
  creditReversedUsd: string;
};

/**
 * Refunds and disputes of a sandbox payment (docs/decisions.md#D-300), with the effect a card
 * provider's would have on the account the payment bought (D-243): a refund, or a dispute lost,
 * raises the account's cumulative `creditReversedUsd` and sends a stateful seller a new account
 * write; an open or won dispute moves no money. No money moves on the test rail: what the seller
 * tries is its own handling of a reversal.
 */
export async function refundPayment(db: Db, organizationId: string, paymentId: string, micros: bigint | undefined) {
  return reverse(db, organizationId, paymentId, (payment, held) => {
    const left = payment.amountMicros - held.refundedMicros - held.disputeLostMicros;
    if (left <= 0n) throw refusal('Nothing of this payment is left to refund.');
    const amount = micros ?? left;
    if (amount <= 0n || amount > left)
      throw new ApiError('invalid_request', `amountUsd: at most ${formatUsd(left)}, what is left of this payment.`);
    return { data: { refundedMicros: held.refundedMicros + amount }, reversedMicros: amount };
  });
}

export async function disputePayment(db: Db, organizationId: string, paymentId: string, status: DisputeStatus) {
  return reverse(db, organizationId, paymentId, (payment, held) => {
    if (status === 'open') {
      if (held.disputeStatus !== null) throw refusal(`This payment's dispute is already ${held.disputeStatus}.`);
      return { data: { disputeStatus: 'open' }, reversedMicros: 0n };
    }
    if (held.disputeStatus !== 'open') throw refusal('Only an open dispute is won or lost: open one first.');
    // A lost dispute takes what the refunds had not already returned, once.
    const lost = status === 'lost' ? payment.amountMicros - held.refundedMicros : 0n;
    return { data: { disputeStatus: status, disputeLostMicros: lost }, reversedMicros: lost };
  });
}

type Held = { refundedMicros: bigint; disputeStatus: string | null; disputeLostMicros: bigint };
type Change = { data: Partial<Held>; reversedMicros: bigint };

async function reverse(
  db: Db,
  organizationId: string,
  paymentId: string,
  decide: (payment: { amountMicros: bigint }, held: Held) => Change,
): Promise<ReversedPayment> {
  return db.$transaction(async (tx) => {
    const payment = await tx.paymentAttempt.findUnique({
      where: { id: paymentId },
      select: {
        amountMicros: true,
        chargedMicros: true,
        accessId: true,
        status: true,
        seller: { select: { organizationId: true, sandbox: true, slug: true } },
      },
    });
    if (!payment || payment.seller.organizationId !== organizationId) throw new ApiError('payment_not_found');
    refuseLive(payment.seller);
    if (!payment.accessId) throw refusal('This payment bought no account, so nothing holds what a reversal would take back.');
    if (payment.status !== 'settled') throw refusal(`This payment is ${payment.status}: only a settled payment can be reversed.`);
    const paid = { amountMicros: payment.chargedMicros ?? payment.amountMicros };
    const held = await lockReversal(tx, paymentId);
    const change = decide(paid, held);
    const after = await tx.sandboxReversal.update({ where: { paymentId }, data: change.data });
    await reverseCredit(tx, payment.accessId, change.reversedMicros);
    const access = await tx.access.findUniqueOrThrow({ where: { id: payment.accessId }, select: { creditReversedMicros: true } });
    return {
      paymentId,
      accessId: payment.accessId,
      amountUsd: formatUsd(paid.amountMicros),
      refundedUsd: formatUsd(after.refundedMicros),
      disputeStatus: after.disputeStatus as DisputeStatus | null,
      disputeLostUsd: formatUsd(after.disputeLostMicros),
      creditReversedUsd: formatUsd(access.creditReversedMicros),
    };
  });
}

/**
 * The payment's reversal record, made on first use, read after a write to it: on PostgreSQL that
 * write holds its row until commit, so two reversals of one payment at once are applied in turn
 * and the second sees what the first took.
 */
async function lockReversal(tx: Tx, paymentId: string): Promise<Held> {
  await tx.sandboxReversal.upsert({ where: { paymentId }, create: { paymentId }, update: { updatedAt: new Date() } });
  return tx.sandboxReversal.findUniqueOrThrow({ where: { paymentId } });
}

function refusal(reason: string): ApiError {
  return new ApiError('refund_not_available', reason);
}
