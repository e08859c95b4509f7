import type { PaymentPayload, PaymentRequirements } from '../x402-wire.js';
import type { VerifiedEvmCharge } from './verify.js';

/**
 * An `evm` charge credential is an x402 v2 `exact` payment in other clothes: the same EIP-3009
 * authorization, signature and token domain. Restated in x402's wire shapes, it goes through
 * hub's `Facilitator` (local or remote) unchanged, so MPP and x402 payments share one verification,
 * one settlement path and one replay store keyed by (payer, nonce), in x402's wire types
 * (shared/payments/x402-wire.ts).
 */

const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER);

/**
 * The facilitator's `(paymentPayload, paymentRequirements)` for a verified charge. Everything comes
 * from the HMAC-bound challenge, so the requirements are hub's own terms, not the payer's claim.
 */
export function toExactPayment(
  charge: VerifiedEvmCharge,
  nowMs: number = Date.now(),
): { paymentPayload: PaymentPayload; paymentRequirements: PaymentRequirements } {
  const { request, payload } = charge;
  const remaining = charge.signed.authorization.validBefore - BigInt(Math.floor(nowMs / 1000));
  const requirements: PaymentRequirements = {
    scheme: 'exact',
    network: `eip155:${request.methodDetails.chainId}`,
    asset: request.currency,
    amount: request.amount,
    payTo: request.recipient,
    // How long the authorization still runs: the most time settling it can take.
    maxTimeoutSeconds: remaining <= 0n ? 0 : remaining > MAX_SAFE ? Number.MAX_SAFE_INTEGER : Number(remaining),
    extra: { name: request.methodDetails.authorization.name, version: request.methodDetails.authorization.version },
  };
  return {
    paymentRequirements: requirements,
    paymentPayload: {
      x402Version: 2,
      accepted: requirements,
      payload: {
        signature: payload.signature,
        authorization: {
          from: payload.from,
          to: payload.to,
          value: payload.value,
          validAfter: payload.validAfter,
          validBefore: payload.validBefore,
          nonce: payload.nonce,
        },
      },
    },
  };
}
