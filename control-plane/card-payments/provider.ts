import type { Logger } from 'pino';
import Stripe from 'stripe';
import type { CardPaymentsConfig, HubConfig } from '../../shared/config.js';
import { ApiError } from '../../shared/errors.js';

/**
 * The card provider's client (Stripe's official SDK), one per configuration, made on first use.
 * Without keys every card route answers 503 `card_payments_not_configured` and the rest of hub
 * works as before (docs/decisions.md#D-239).
 */
const clients = new WeakMap<CardPaymentsConfig, Stripe>();

export type CardProvider = { stripe: Stripe; config: CardPaymentsConfig };

export function cardProvider(config: HubConfig): CardProvider {
  const cards = config.cardPayments;
  if (!cards) {
    throw new ApiError(
      'card_payments_not_configured',
      'Card payments are not configured: set HUB_STRIPE_SECRET_KEY, HUB_STRIPE_PUBLISHABLE_KEY and HUB_STRIPE_WEBHOOK_SECRET.',
    );
  }
  return { stripe: stripeFor(cards), config: cards };
}

/** The client of a configuration that has the keys (the delivery worker and the pending loop hold one). */
export function stripeFor(cards: CardPaymentsConfig): Stripe {
  let stripe = clients.get(cards);
  if (!stripe) {
    stripe = new Stripe(cards.secretKey, {
      timeout: cards.timeoutMs,
      maxNetworkRetries: cards.maxNetworkRetries,
      appInfo: { name: 'hub' },
      // No telemetry headers about earlier calls: hub's calls say only what they are.
      telemetry: false,
    });
    clients.set(cards, stripe);
  }
  return stripe;
}

/**
 * Runs one provider call and turns its failures into hub's codes: a provider that did not answer,
 * timed out or failed on its side (5xx, 429) is 503 `card_provider_unavailable` (retry: every call
 * carries an idempotency key, so the retry cannot charge or create twice); a refusal is 502
 * `card_provider_error` with the provider's own message. Only the error's type, code and request
 * id are logged: never a key, and never a request body.
 */
export async function callProvider<T>(logger: Logger, what: string, call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (err) {
    if (!(err instanceof Stripe.errors.StripeError)) throw err;
    const facts = providerFacts(what, err);
    if (isUnavailable(err)) {
      logger.warn(facts, 'card provider unavailable');
      throw new ApiError('card_provider_unavailable');
    }
    logger.warn(facts, 'card provider refused a call');
    throw new ApiError('card_provider_error', `The card provider refused the request: ${err.message}`);
  }
}

/** What a provider error may be logged as: never a key, a body or the provider's message. */
export function providerFacts(what: string, err: InstanceType<typeof Stripe.errors.StripeError>) {
  return { provider: 'stripe', call: what, type: err.type, code: err.code, status: err.statusCode, requestId: err.requestId };
}

/** A provider that did not answer, timed out, or failed on its side: retrying with the same key may succeed. */
export function isUnavailable(err: InstanceType<typeof Stripe.errors.StripeError>): boolean {
  if (err instanceof Stripe.errors.StripeConnectionError || err instanceof Stripe.errors.StripeRateLimitError) return true;
  return err.statusCode === undefined || err.statusCode >= 500;
}
