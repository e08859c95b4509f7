import type { Logger } from 'pino';
import Stripe from 'stripe';
import { centsToMicros } from '../../shared/card-payments/cents.js';
import type { CardPurchaseInput, PurchaseOutcome } from '../../shared/contract.js';
import { ApiError } from '../../shared/errors.js';
import { countTransaction } from '../analytics/traffic-rollup.js';
import type { ControlPlaneServices } from '../context.js';
import type { Db } from '../db/client.js';
import { insertInto, sqlOf } from '../db/sql.js';
import { COMPLETED, PURCHASE_KINDS, refuseUnbound } from '../payments/attempt-claim.js';
import { type Attempt, readAttempt } from '../payments/attempt-rows.js';
import { moveAttempt } from '../payments/attempt-status.js';
import { billingSummary } from '../payments/settlement/billing.js';
import { fulfil, opened, paymentView } from '../storefront/purchase.js';
import { cardOffer } from './card-offer.js';
import { cardProvider, isUnavailable, providerFacts } from './provider.js';

/**
 * A purchase paid by card at the pay URL (docs/decisions.md#D-258): the paid retry of `POST
 * /extend` carries MPP's `stripe` credential, a shared payment token the agent's wallet granted
 * the seller for the price. hub claims the attempt for the card (`in_flight`, so a second token
 * cannot be charged beside it), creates and confirms a PaymentIntent with the token on the
 * seller's connected account, and only when the provider answers `succeeded` records the card
 * payment, marks the attempt settled and opens or extends the account.
 *
 * Every PaymentIntent of an attempt is created under the idempotency key `hub-card-<paymentId>`:
 * the SDK's own retries, and the agent's retry of the same credential after a provider outage,
 * get the one PaymentIntent the provider made, never a second charge. A refusal (a declined
 * card, a spent or foreign token) releases the attempt: nothing was charged, the agent asks for a
 * fresh challenge. A provider that did not answer leaves the attempt claimed for this token, so
 * the same credential sent again finishes it.
 */

/** PaymentIntents with a shared payment token need the provider's preview API version (as mppx 0.11 uses). */
export const SPT_API_VERSION = '2026-07-29.preview';

/** What a card payment's attempt records as its payload: the token it is being charged with. */
type CardPayload = { spt: string };

export async function payPurchaseByCard(
  services: Pick<ControlPlaneServices, 'db' | 'config' | 'logger'>,
  input: CardPurchaseInput,
): Promise<PurchaseOutcome> {
  const { db, logger } = services;
  const { stripe } = cardProvider(services.config);
  const attempt = await readAttempt(sqlOf(db), input.paymentId);
  if (!attempt) throw settlementFailed('unknown_payment');
  // A per-call payment presented here pays for another request.
  if (!PURCHASE_KINDS.has(attempt.kind)) throw new ApiError('payment_request_mismatch');
  refuseUnbound(attempt, input);
  const seller = await db.seller.findUniqueOrThrow({
    where: { id: attempt.sellerId },
    select: { cardAccountId: true, cardChargesEnabled: true, sandbox: true },
  });
  // Offered when challenged, and still: a seller the provider stopped letting take charges takes none.
  const offer = cardOffer(services.config.cardPayments, seller, attempt.amountMicros);
  if (!offer || !seller.cardAccountId) throw settlementFailed('card_not_accepted');
  await claimForCard(db, attempt, input.spt);

  // Refused by the provider: nothing was charged, and the attempt is let go with the reason.
  const release = (settlementReason: string) =>
    moveAttempt(db, attempt.id, { to: 'released', from: ['in_flight'], set: { chargedMicros: 0n, settlementReason } });
  const intent = await createIntent(stripe, logger, attempt, seller.cardAccountId, offer.amountCents, input.spt).catch(
    async (err: unknown) => {
      if (err instanceof ApiError && err.code === 'payment_required') await release(err.extra.settlementReason as string);
      throw err;
    },
  );
  if (intent.status === 'processing') {
    // The provider confirms later: its payment_intent.succeeded event finishes the purchase.
    return { kind: 'settling', payment: paymentView({ ...attempt, status: 'in_flight' }) };
  }
  if (intent.status !== 'succeeded') {
    const reason = intent.status === 'requires_action' ? 'card_requires_action' : 'card_declined';
    await release(reason);
    throw settlementFailed(reason);
  }
  await recordCardCharge(db, attempt, seller.cardAccountId, intent);
  const accessId = await fulfil(db, attempt.id);
  // Billed whole, as any purchase; no transaction moved, so the receipt is the card's (the proxy's MPP receipt).
  const billed = {
    kind: 'billed' as const,
    adjusted: [],
    billing: billingSummary('settled', attempt.amountMicros, attempt.amountMicros, 'credited', null),
    receipt: null,
  };
  const settled = { ...attempt, status: 'settled', settleTxHash: null };
  return { ...(await opened(db, settled, accessId, billed)), card: { paymentIntentId: intent.id } };
}

function settlementFailed(settlementReason: string): ApiError {
  return new ApiError('payment_required', 'settlement_failed', { settlementReason });
}

/**
 * Claims the attempt for this token (`challenge_created → in_flight`), or finds it claimed for
 * the same token by an earlier try the provider did not answer: that one is finished now, under
 * the same idempotency key. Anything else is the claim's usual refusal.
 */
async function claimForCard(db: Db, attempt: Attempt, spt: string): Promise<void> {
  const payload: CardPayload = { spt };
  let current = attempt;
  if (current.status === 'challenge_created') {
    if (current.expiresAt && current.expiresAt.getTime() < Date.now()) throw settlementFailed('challenge_expired');
    const claimed = await moveAttempt(db, current.id, {
      to: 'in_flight',
      from: ['challenge_created'],
      set: {
        protocol: 'mpp',
        paymentMethod: 'mpp_card',
        paymentPayloadJson: JSON.stringify(payload),
        verifiedAt: new Date(),
        authorizedMicros: current.amountMicros,
      },
    });
    if (claimed) return;
    current = (await readAttempt(sqlOf(db), current.id)) ?? current;
  }
  if (current.status === 'in_flight') {
    const sameToken = current.paymentMethod === 'mpp_card' && current.paymentPayloadJson === JSON.stringify(payload);
    if (sameToken) return;
    throw new ApiError('payment_request_in_flight');
  }
  if (COMPLETED.has(current.status)) throw new ApiError('payment_request_already_completed');
  throw settlementFailed(current.settlementReason ?? 'payment_closed');
}

/**
 * Creates and confirms the PaymentIntent for the token on the seller's connected account. A
 * declined card or another refusal is 402 `settlement_failed` (the caller releases the attempt);
 * a provider that did not answer or failed on its side is 503 `service_unavailable` (send the
 * same payment again); the same key already in use by a request still running is 409
 * `payment_request_in_flight`.
 */
async function createIntent(
  stripe: Stripe,
  logger: Logger,
  attempt: Attempt,
  cardAccountId: string,
  amountCents: number,
  spt: string,
): Promise<Stripe.PaymentIntent> {
  const params = {
    amount: amountCents,
    currency: 'usd',
    confirm: true,
    automatic_payment_methods: { enabled: true, allow_redirects: 'never' },
    // Not in the SDK's types yet: shared payment tokens are a preview of the provider's API.
    shared_payment_granted_token: spt,
    metadata: { hubPaymentId: attempt.id, hubSellerId: attempt.sellerId, hubPurchase: attempt.kind },
  } as Stripe.PaymentIntentCreateParams;
  try {
    return await stripe.paymentIntents.create(params, {
      idempotencyKey: `hub-card-${attempt.id}`,
      stripeAccount: cardAccountId,
      apiVersion: SPT_API_VERSION,
    });
  } catch (err) {
    if (!(err instanceof Stripe.errors.StripeError)) throw err;
    const facts = providerFacts('paymentIntents.create', err);
    if (err instanceof Stripe.errors.StripeIdempotencyError) {
      logger.warn(facts, 'card payment already being created');
      throw new ApiError('payment_request_in_flight');
    }
    if (isUnavailable(err)) {
      logger.warn(facts, 'card provider unavailable');
      throw new ApiError(
        'service_unavailable',
        'The card could not be charged: the card provider did not answer. Nothing was charged twice; send the same payment again shortly.',
      );
    }
    logger.info(facts, 'card payment refused');
    throw settlementFailed(err instanceof Stripe.errors.StripeCardError ? 'card_declined' : 'card_refused');
  }
}

/**
 * Records a PaymentIntent that succeeded for an attempt claimed for a card: the attempt settled
 * (counted in the seller's analytics) and the card payment, whose account `fulfil` then writes.
 * Once: the move is guarded on `in_flight`, so the purchase's own answer and the provider's
 * event record it once between them. True when this call recorded it.
 */
export async function recordCardCharge(db: Db, attempt: Attempt, cardAccountId: string, intent: Stripe.PaymentIntent): Promise<boolean> {
  const now = new Date();
  return sqlOf(db).transaction(async (tx) => {
    const settled = await moveAttempt(tx, attempt.id, {
      to: 'settled',
      from: ['in_flight'],
      set: { settledAt: now, chargedMicros: attempt.amountMicros, remainderHandling: 'credited', settlementReason: null },
    });
    if (!settled) return false;
    const latest = intent.latest_charge;
    await tx.run(
      insertInto('CardPayment', {
        id: intent.id,
        sellerId: attempt.sellerId,
        paymentAttemptId: attempt.id,
        cardAccountId,
        chargeId: latest === null ? null : typeof latest === 'string' ? latest : latest.id,
        amountMicros: attempt.amountMicros,
        refundedMicros: 0n,
        disputeLostMicros: 0n,
        status: 'succeeded',
        createdAt: now,
        updatedAt: now,
      }),
    );
    await countTransaction(tx, { ...attempt, chargedMicros: attempt.amountMicros, payer: null });
    return true;
  });
}

/**
 * The provider's `payment_intent.succeeded` for a card purchase whose own answer never recorded it
 * (the provider confirmed after hub stopped waiting, or hub stopped): recorded and the account
 * opened now. Idempotent, as the purchase's own path is; an intent that is not for a claimed card
 * attempt of this amount, on the seller's account, changes nothing.
 */
export async function finishCardPurchase(db: Db, intent: Stripe.PaymentIntent, account: string | undefined): Promise<void> {
  const paymentId = intent.metadata?.hubPaymentId;
  if (!paymentId) return;
  const attempt = await readAttempt(sqlOf(db), paymentId);
  if (attempt?.status !== 'in_flight' || attempt.paymentMethod !== 'mpp_card') return;
  if (centsToMicros(intent.amount) !== attempt.amountMicros) return;
  const seller = await db.seller.findUniqueOrThrow({ where: { id: attempt.sellerId }, select: { cardAccountId: true } });
  if (!seller.cardAccountId || (account !== undefined && account !== seller.cardAccountId)) return;
  if (await recordCardCharge(db, attempt, seller.cardAccountId, intent)) await fulfil(db, attempt.id);
}
