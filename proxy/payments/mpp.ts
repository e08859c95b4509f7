import { createHmac } from 'node:crypto';
import type { RequestView } from '../../runtime/request-view.js';
import type { IssuedChallenge } from '../../shared/contract.js';
import { normalizeHost } from '../../shared/pay-host.js';
import { evmChainIdOf } from '../../shared/payments/evm-network.js';
import {
  bodyDigest,
  CHARGE_INTENT,
  createReceipt,
  EVM_METHOD,
  evmChargeRequest,
  isStripeCharge,
  paymentIdOpaque,
  readCredential,
  STRIPE_METHOD,
  serializeChallenge,
  serializeReceipt,
  sha256Digest,
  signChallenge,
  stripeChargeRequest,
  toExactPayment,
  verifyEvmCharge,
  verifyStripeCharge,
} from '../../shared/payments/mpp/index.js';
import type { PaymentPayload } from '../../shared/payments/x402-wire.js';

/**
 * MPP on the pay URL: the `WWW-Authenticate: Payment` challenge beside x402's, credentials in
 * `Authorization: Payment`, `Payment-Authorization` or `Authorization: Bearer`, and the
 * `Payment-Receipt` of a settled call. Challenge ids are HMACs under a key every proxy derives from
 * the internal token, so any replica recognises any other's challenges without shared state.
 */
export function mppSecret(internalToken: string): string {
  return createHmac('sha256', internalToken).update('hub mpp challenge key v1').digest('base64url');
}

/**
 * The MPP challenges of a priced 402: the `evm` charge, and beside it, when the control-plane
 * offers the price by card, the `stripe` charge for the same payment attempt (both in one
 * `WWW-Authenticate` value, as RFC 9110 lists challenges). `challengeId` is the `evm` one's.
 * `bodySha256Hex` is the SHA-256 of `body`, lowercase hex, when the caller has it.
 */
export function mppChallenge(req: RequestView, challenge: IssuedChallenge, body: Buffer, secret: string, bodySha256Hex?: string) {
  const shared = {
    realm: normalizeHost(req.headers.host) ?? 'hub',
    intent: CHARGE_INTENT,
    expires: challenge.expiresAt,
    // The body's SHA-256, when the caller has it already, is not computed again.
    digest: bodySha256Hex ? sha256Digest(Buffer.from(bodySha256Hex, 'hex')) : bodyDigest(body),
    opaque: paymentIdOpaque(challenge.paymentId),
  };
  const fields = {
    ...shared,
    method: EVM_METHOD,
    request: evmChargeRequest({
      priceMicros: BigInt(challenge.amountMicros),
      chainId: evmChainIdOf(challenge.network),
      token: challenge.token,
      recipient: challenge.payTo,
    }),
  };
  const issued = signChallenge(fields, secret);
  const card = challenge.card && signChallenge({ ...shared, method: STRIPE_METHOD, request: stripeChargeRequest(challenge.card) }, secret);
  const header = card ? `${serializeChallenge(issued)}, ${serializeChallenge(card)}` : serializeChallenge(issued);
  return { header, challengeId: issued.id };
}

/** An MPP credential as read and checked; `mpp` is restated as the x402 payment it authorizes. */
export type MppCredentialCheck =
  | { kind: 'none' }
  | { kind: 'malformed'; why: string }
  | { kind: 'refused'; reason: string }
  | { kind: 'mpp'; paymentId: string; payload: PaymentPayload; carrier: string }
  | { kind: 'card'; paymentId: string; spt: string; carrier: string };

/** Reads and checks an MPP credential (challenge id, realm, expiry, terms, nonce); never throws. */
export function readMppCredential(req: RequestView, secret: string): MppCredentialCheck {
  const found = readCredential(req.headers);
  if (found.status === 'absent') return { kind: 'none' };
  if (found.status === 'invalid') return { kind: 'malformed', why: `${found.carrier}: ${found.detail}` };
  const realm = normalizeHost(req.headers.host) ?? 'hub';
  if (isStripeCharge(found.credential)) {
    const card = verifyStripeCharge(found.credential, { secret, realm });
    if (!card.ok) return { kind: 'refused', reason: card.reason };
    return { kind: 'card', paymentId: card.value.paymentId, spt: card.value.spt, carrier: found.carrier };
  }
  const verified = verifyEvmCharge(found.credential, { secret, realm });
  if (!verified.ok) return { kind: 'refused', reason: verified.reason };
  // The body binding is checked with the payment attempt's, like every protocol's (409 on mismatch).
  return {
    kind: 'mpp',
    paymentId: verified.value.paymentId,
    payload: toExactPayment(verified.value).paymentPayload,
    carrier: found.carrier,
  };
}

export function mppReceipt(reference: string, method?: string): string {
  return serializeReceipt(createReceipt({ reference, ...(method ? { method } : {}) }));
}
