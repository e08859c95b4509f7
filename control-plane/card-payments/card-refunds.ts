import type { Logger } from 'pino';
import type { Prisma } from '../../generated/prisma/sqlite/client.js';
import type { CardPaymentsConfig } from '../../shared/config.js';
import type { Db } from '../db/client.js';
import { callProvider, stripeFor } from './provider.js';

/**
 * Card payments refunded when the account write they bought fails for good (spec: States and
 * transitions › "a captured one is refunded"; docs/decisions.md#D-260). The failure marks them
 * `refund_requested` in the transaction that records it; the provider is asked after the pass has
 * recorded its outcomes, and asked again by the pending loop until it accepts, always under the
 * key `hub-refund-<paymentIntentId>`, so however often it is asked the payment is refunded once.
 * The refund's own `charge.refunded` event then raises the account's `creditReversedUsd` (D-243).
 */

/**
 * Marks for refund the card payments of an account that paid for what the seller never took:
 * every one when the seller never applied a write of the account, else those made since the last
 * write it applied. In the caller's transaction. Answers how many.
 */
export async function markCardRefunds(tx: Prisma.TransactionClient, accessId: string): Promise<number> {
  const applied = await tx.accountWrite.findFirst({
    where: { accessId, kind: 'write', status: 'applied' },
    orderBy: { deliveredAt: 'desc' },
    select: { deliveredAt: true },
  });
  const since = applied?.deliveredAt;
  const marked = await tx.cardPayment.updateMany({
    where: { accessId, status: 'succeeded', ...(since ? { createdAt: { gt: since } } : {}) },
    data: { status: 'refund_requested' },
  });
  return marked.count;
}

/**
 * Asks the provider to refund, whole, each card payment marked for it that it has not accepted yet
 * (of `accessIds`, or any): on the connected account the payment was taken on. A provider that
 * fails leaves the payment marked for the next ask. Answers how many the provider accepted.
 */
export async function requestCardRefunds(
  db: Db,
  cards: CardPaymentsConfig,
  logger: Logger,
  accessIds?: readonly string[],
): Promise<number> {
  const due = await db.cardPayment.findMany({
    where: { status: 'refund_requested', refundId: null, ...(accessIds ? { accessId: { in: [...accessIds] } } : {}) },
    orderBy: { createdAt: 'asc' },
    take: 100,
  });
  if (due.length === 0) return 0;
  const stripe = stripeFor(cards);
  let accepted = 0;
  for (const payment of due) {
    try {
      const refund = await callProvider(logger, 'refunds.create', () =>
        stripe.refunds.create(
          { payment_intent: payment.id, metadata: { hubAccessId: payment.accessId ?? '', hubReason: 'account_write_failed' } },
          { idempotencyKey: `hub-refund-${payment.id}`, stripeAccount: payment.cardAccountId },
        ),
      );
      await db.cardPayment.updateMany({ where: { id: payment.id, refundId: null }, data: { refundId: refund.id } });
      accepted++;
    } catch (err) {
      // callProvider logged the provider's side; the payment stays marked and is asked for again.
      logger.warn(
        { paymentIntentId: payment.id, code: (err as { code?: unknown }).code },
        'card refund not accepted yet; asking again later',
      );
    }
  }
  return accepted;
}
