/**
 * MPP, the `Payment` HTTP authentication scheme, as hub speaks it: wire-compatible with the mppx
 * 0.11 client paying with its `evm` charge method (EIP-3009). No I/O here; the proxy binds it to
 * HTTP, control-plane/settlement recovers signers and settles.
 *
 * Server flow: `evmChargeRequest` + `paymentIdOpaque` + `bodyDigest` → `signChallenge` →
 * `serializeChallenge` into `WWW-Authenticate`; on the paid retry `readCredential` →
 * `verifyEvmCharge` → recover `signed` / `toExactPayment` for the facilitator → on a 2xx,
 * `serializeReceipt(createReceipt(…))` into `Payment-Receipt`. A seller that takes cards adds a
 * `stripe` challenge (`stripeChargeRequest`), whose credential `verifyStripeCharge` checks.
 */

export { bodyDigest, digestMatches, sha256Digest } from './body-digest.js';
export {
  type Challenge,
  type ChallengeFailure,
  type ChallengeFields,
  expiresAfter,
  isChallengeExpired,
  MAX_REQUEST_PARAM_LENGTH,
  PAYMENT_SCHEME,
  parseChallenge,
  parseChallenges,
  serializeChallenge,
  signChallenge,
  verifyChallengeId,
  WWW_AUTHENTICATE_HEADER,
} from './challenge.js';
export {
  AUTHORIZATION_HEADER,
  type Credential,
  type CredentialCarrier,
  type CredentialFailure,
  type CredentialLookup,
  decodeCredential,
  type IncomingHeaders,
  MAX_CREDENTIAL_LENGTH,
  PAYMENT_AUTHORIZATION_HEADER,
  parseCredential,
  readCredential,
  serializeCredential,
} from './credential.js';
export type { Parsed } from './encoding.js';
export {
  CHARGE_INTENT,
  challengeNonce,
  EVM_METHOD,
  type EvmAuthorizationPayload,
  type EvmChargeRequest,
  type EvmChargeTerms,
  type EvmToken,
  evmChargeRequest,
  evmSource,
  parseEvmAuthorizationPayload,
  parseEvmChargeRequest,
} from './evm-charge.js';
export { paymentIdOf, paymentIdOpaque } from './opaque.js';
export { createReceipt, PAYMENT_RECEIPT_HEADER, parseReceipt, type Receipt, type ReceiptFailure, serializeReceipt } from './receipt.js';
export {
  isStripeCharge,
  MINIMUM_CARD_CENTS,
  STRIPE_METHOD,
  type StripeChargeFailure,
  type StripeChargeRequest,
  stripeChargeFailureReasons,
  stripeChargeRequest,
  type VerifiedStripeCharge,
  verifyStripeCharge,
} from './stripe-charge.js';
export {
  type EvmChargeFailure,
  evmChargeFailureReasons,
  type VerifiedEvmCharge,
  type VerifyOptions,
  verifyEvmCharge,
} from './verify.js';
export { toExactPayment } from './x402-exact.js';
