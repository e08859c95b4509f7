import { type Challenge, isChallengeExpired, verifyChallengeId } from './challenge.js';
import type { Credential } from './credential.js';
import { failed, isPlainObject, type Parsed, parsed } from './encoding.js';
import { CHARGE_INTENT } from './evm-charge.js';
import { paymentIdOf } from './opaque.js';

/**
 * The `stripe` payment method's `charge` intent: the payer's wallet grants the seller a Shared
 * Payment Token (SPT) for the amount, and the server charges it by creating a PaymentIntent with
 * it. Wire-compatible with mppx 0.11's `stripe` method (docs/decisions.md#D-257):
 *
 * Request (the challenge's `request` JSON, in the form mppx's server method puts on the wire):
 *   { amount: "<cents>", currency: "usd", methodDetails: { networkId, paymentMethodTypes: ["card"] } }
 * mppx's client hands `amount`, `currency`, `networkId` and the challenge's expiry to the wallet
 * that makes the token.
 *
 * Payload (the credential's `payload`): { spt: "spt_…", externalId? }.
 */

export const STRIPE_METHOD = 'stripe';

/** The provider's smallest charge in US dollars, in cents (docs/decisions.md#D-245). */
export const MINIMUM_CARD_CENTS = 50;

export type StripeChargeRequest = {
  amount: string;
  currency: 'usd';
  methodDetails: { networkId: string; paymentMethodTypes: ['card'] };
};

export function stripeChargeRequest(terms: { amountCents: number; networkId: string }): StripeChargeRequest {
  if (!Number.isSafeInteger(terms.amountCents) || terms.amountCents < MINIMUM_CARD_CENTS)
    throw new RangeError(`a card charge is a whole number of cents, at least ${MINIMUM_CARD_CENTS}`);
  return {
    amount: String(terms.amountCents),
    currency: 'usd',
    methodDetails: { networkId: terms.networkId, paymentMethodTypes: ['card'] },
  };
}

// The provider's token ids: a prefix and base62, well under this.
const SPT = /^spt_[A-Za-z0-9_]{1,250}$/;

export const stripeChargeFailureReasons = {
  unknown_challenge: 'The challenge was not issued by this server, or was altered.',
  wrong_realm: 'The challenge was issued for another host.',
  challenge_expired: 'The challenge has expired; ask for a fresh one.',
  missing_payment_id: 'The challenge carries no payment id.',
  invalid_payload: 'The credential payload is not a shared payment token ({spt}).',
} as const;

export type StripeChargeFailure = keyof typeof stripeChargeFailureReasons;

export type VerifiedStripeCharge = { paymentId: string; challenge: Challenge; spt: string };

/** Whether a credential answers a `stripe` challenge (the other methods are verified elsewhere). */
export function isStripeCharge(credential: Credential): boolean {
  return credential.challenge.method === STRIPE_METHOD && credential.challenge.intent === CHARGE_INTENT;
}

/**
 * Everything about a `stripe` charge credential that needs no provider: that hub issued the
 * challenge (HMAC, so the amount, the seller's network and the payment id echoed are hub's own),
 * for this realm, still unexpired, and that the payload is a token. The token itself is proven
 * only by the provider charging it.
 */
export function verifyStripeCharge(
  credential: Credential,
  options: { secret: string; realm?: string; nowMs?: number },
): Parsed<VerifiedStripeCharge, StripeChargeFailure> {
  const fail = (reason: StripeChargeFailure) => failed(reason, stripeChargeFailureReasons[reason]);
  const { challenge } = credential;
  if (!verifyChallengeId(challenge, options.secret)) return fail('unknown_challenge');
  if (options.realm !== undefined && challenge.realm !== options.realm) return fail('wrong_realm');
  if (isChallengeExpired(challenge, options.nowMs ?? Date.now())) return fail('challenge_expired');
  const paymentId = paymentIdOf(challenge);
  if (paymentId === undefined) return fail('missing_payment_id');
  const payload = credential.payload;
  if (!isPlainObject(payload) || typeof payload.spt !== 'string' || !SPT.test(payload.spt)) return fail('invalid_payload');
  return parsed({ paymentId, challenge, spt: payload.spt });
}
