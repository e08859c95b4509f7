import type Stripe from 'stripe';
import type { Prisma } from '../../generated/prisma/sqlite/client.js';
import { centsToMicros } from '../../shared/card-payments/cents.js';
import { reverseCredit } from './credit-reversal.js';

type Tx = Prisma.TransactionClient;

/**
 * What each provider event does to hub (docs/decisions.md#D-243). Amounts come from the event's
 * own object, which carries cumulative figures (a charge's `amount_refunded`), so each event
 * applies only what it adds to what the card payment already records: a late or repeated event
 * adds nothing. An event about a payment hub did not take is acknowledged and changes nothing.
 * Answers whether an account write was left to deliver.
 */
export async function applyProviderEvent(tx: Tx, event: Stripe.Event): Promise<boolean> {
  switch (event.type) {
    case 'payment_intent.succeeded':
      return paymentSucceeded(tx, event.data.object);
    case 'charge.refunded':
      return chargeRefunded(tx, event.data.object);
    case 'charge.dispute.created':
      return disputeMoved(tx, event.data.object, 'open');
    case 'charge.dispute.closed':
      return disputeMoved(tx, event.data.object, event.data.object.status === 'lost' ? 'lost' : 'won');
    case 'account.updated':
      await tx.seller.updateMany({
        where: { cardAccountId: event.data.object.id },
        data: { cardChargesEnabled: event.data.object.charges_enabled },
      });
      return false;
    default:
      return false;
  }
}

function idOf(ref: string | { id: string } | null): string | null {
  return ref === null ? null : typeof ref === 'string' ? ref : ref.id;
}

/** Notes the charge a recorded card payment made (its status stays: a refund may be under way). */
async function paymentSucceeded(tx: Tx, intent: Stripe.PaymentIntent): Promise<boolean> {
  const chargeId = idOf(intent.latest_charge);
  if (chargeId) await tx.cardPayment.updateMany({ where: { id: intent.id, chargeId: null }, data: { chargeId } });
  return false;
}

async function chargeRefunded(tx: Tx, charge: Stripe.Charge): Promise<boolean> {
  const paymentId = idOf(charge.payment_intent);
  const payment = paymentId ? await tx.cardPayment.findUnique({ where: { id: paymentId } }) : null;
  if (!payment) return false;
  const refunded = centsToMicros(charge.amount_refunded);
  const added = refunded - payment.refundedMicros;
  if (added <= 0n) return false;
  await tx.cardPayment.update({ where: { id: payment.id }, data: { refundedMicros: refunded, chargeId: charge.id } });
  if (!payment.accessId) return false;
  await reverseCredit(tx, payment.accessId, added);
  return true;
}

/**
 * A dispute opened is recorded (the money is not pulled back from the account until it is lost:
 * the seller may win it); lost, its amount is reversed once; won, nothing is reversed.
 */
async function disputeMoved(tx: Tx, dispute: Stripe.Dispute, status: 'open' | 'won' | 'lost'): Promise<boolean> {
  const paymentId = idOf(dispute.payment_intent);
  const payment = paymentId ? await tx.cardPayment.findUnique({ where: { id: paymentId } }) : null;
  if (!payment) return false;
  if (status !== 'lost') {
    // A closed dispute is final: a redelivered `created` after it does not reopen it.
    if (payment.disputeStatus === 'won' || payment.disputeStatus === 'lost') return false;
    await tx.cardPayment.update({ where: { id: payment.id }, data: { disputeStatus: status } });
    return false;
  }
  const lost = centsToMicros(dispute.amount);
  const added = lost - payment.disputeLostMicros;
  await tx.cardPayment.update({ where: { id: payment.id }, data: { disputeStatus: 'lost', disputeLostMicros: lost } });
  if (added <= 0n || !payment.accessId) return false;
  await reverseCredit(tx, payment.accessId, added);
  return true;
}
