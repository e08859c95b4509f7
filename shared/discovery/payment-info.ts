import type { DiscoveryCatalog } from '../contract.js';
import { microsToTokenUnits } from '../money.js';
import { EVM_METHOD } from '../payments/mpp/evm-charge.js';

type Payment = NonNullable<DiscoveryCatalog['payment']>;
type Price = NonNullable<DiscoveryCatalog['routes'][number]['price']>;

/**
 * A priced operation's `x-payment-info` (docs/decisions.md#D-217), read by two kinds of crawler
 * that agree on the name and not on the fields: x402's (`price` in USD, `protocols` with the
 * scheme, network, asset and recipient a challenge will carry) and MPP's draft-payment-discovery
 * (`offers`: intent, method, amount in the token's smallest unit, currency). Both sets are
 * written; neither names a field of the other.
 */
export function paymentInfo(price: Price, payment: Payment, note: string | undefined) {
  const amount = microsToTokenUnits(BigInt(price.amountMicros), payment.decimals).toString();
  return {
    price: { mode: 'fixed', currency: 'USD', amount: price.amountUsd },
    protocols: [
      {
        x402: {
          scheme: 'exact',
          network: payment.network,
          asset: payment.asset,
          payTo: payment.payTo,
          amount,
          maxTimeoutSeconds: payment.maxTimeoutSeconds,
        },
      },
      { mpp: { method: EVM_METHOD, intent: 'charge', currency: payment.asset } },
    ],
    offers: [{ intent: 'charge', method: EVM_METHOD, amount, currency: payment.asset, ...(note ? { description: note } : {}) }],
  };
}
