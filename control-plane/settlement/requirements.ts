import { getAddress } from 'viem';
import { microsToTokenUnits } from '../../shared/money.js';
import type { SettlementToken } from './exact-payment.js';
import type { Network, PaymentRequirements } from '../../shared/payments/x402-wire.js';

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
    scheme: 'exact',
    network: input.network,
    asset: getAddress(input.token.address),
    amount: microsToTokenUnits(input.priceMicros, input.token.decimals).toString(),
    payTo: getAddress(input.payTo),
    maxTimeoutSeconds: input.maxTimeoutSeconds,
    extra: { name: input.token.name, version: input.token.version },
  };
}
