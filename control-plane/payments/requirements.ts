import { getAddress } from 'viem';
import { microsToTokenUnits } from '../../shared/money.js';
import type { Network, PaymentRequirements } from '../../shared/payments/x402-wire.js';
import type { SettlementToken } from '../facilitator/exact-payment.js';
import type { PaymentRail } from './rail.js';

/** The x402 scheme every on-chain payment attempt is made in. */
export const PAYMENT_SCHEME = 'exact';

/**
 * The x402 exact-EVM requirements of one payment attempt. The attempt id rides in `extra`: x402
 * clients send the requirements they accepted back verbatim, which is how a paid retry names the
 * attempt it pays for. Built the same way for the challenge and for verification.
 */
export function attemptRequirements(rail: PaymentRail, attempt: { id: string; amountMicros: bigint; payTo: string }): PaymentRequirements {
  const base = exactRequirements({
    priceMicros: attempt.amountMicros,
    network: rail.network,
    token: rail.token,
    payTo: attempt.payTo,
    maxTimeoutSeconds: rail.maxTimeoutSeconds,
  });
  return { ...base, extra: { ...base.extra, paymentId: attempt.id } };
}

/**
 * The x402 exact-EVM requirements for a price in micro-USD: the amount in the token's atomic
 * units, and the token's EIP-712 domain in `extra`, which the client needs to sign.
 */
export function exactRequirements(input: {
  priceMicros: bigint;
  network: Network;
  token: SettlementToken & { decimals: number };
  payTo: string;
  maxTimeoutSeconds: number;
}): PaymentRequirements {
  return {
    scheme: PAYMENT_SCHEME,
    network: input.network,
    asset: getAddress(input.token.address),
    amount: microsToTokenUnits(input.priceMicros, input.token.decimals).toString(),
    payTo: getAddress(input.payTo),
    maxTimeoutSeconds: input.maxTimeoutSeconds,
    extra: { name: input.token.name, version: input.token.version },
  };
}
