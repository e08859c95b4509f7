/**
 * MPP, the `Payment` HTTP authentication scheme, as hub speaks it: wire-compatible with the mppx
 * 0.11 client paying with its `evm` charge method (EIP-3009). No I/O here; the proxy binds it to
 * HTTP, control-plane/settlement recovers signers and settles.
 *
 * Server flow: `evmChargeRequest` + `paymentIdOpaque` + `bodyDigest` → `signChallenge` →
 * `serializeChallenge` into `WWW-Authenticate`; on the paid retry `readCredential` →
 * `verifyEvmCharge` → recover `signed` / `toExactPayment` for the facilitator → on a 2xx,
 * `serializeReceipt(createReceipt(…))` into `Payment-Receipt`.
 */

export type { Parsed } from './encoding.js';
export {
  signChallenge,
  expiresAfter,
  isChallengeExpired,
  parseChallenge,
  parseChallenges,
  serializeChallenge,
  verifyChallengeId,
  MAX_REQUEST_PARAM_LENGTH,
  PAYMENT_SCHEME,
  WWW_AUTHENTICATE_HEADER,
  type Challenge,
  type ChallengeFailure,
  type ChallengeFields,
} from './challenge.js';
export {
  decodeCredential,
  parseCredential,
  readCredential,
  serializeCredential,
  AUTHORIZATION_HEADER,
  MAX_CREDENTIAL_LENGTH,
  PAYMENT_AUTHORIZATION_HEADER,
  type Credential,
  type CredentialCarrier,
  type CredentialFailure,
  type CredentialLookup,
  type IncomingHeaders,
} from './credential.js';
export { bodyDigest, digestMatches } from './body-digest.js';
export { paymentIdOf, paymentIdOpaque } from './opaque.js';
export {
  challengeNonce,
  evmChargeRequest,
  evmSource,
  parseEvmAuthorizationPayload,
  parseEvmChargeRequest,
  CHARGE_INTENT,
  EVM_METHOD,
  type EvmAuthorizationPayload,
  type EvmChargeRequest,
  type EvmChargeTerms,
  type EvmToken,
} from './evm-charge.js';
export {
  verifyEvmCharge,
  evmChargeFailureReasons,
  type EvmChargeFailure,
  type VerifiedEvmCharge,
  type VerifyOptions,
} from './verify.js';
export { toExactPayment } from './x402-exact.js';
export { createReceipt, parseReceipt, serializeReceipt, PAYMENT_RECEIPT_HEADER, type Receipt, type ReceiptFailure } from './receipt.js';
