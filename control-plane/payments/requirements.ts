import type { PaymentRequirements } from '../../shared/payments/x402-wire.js';
import { exactRequirements } from '../settlement/requirements.js';
import type { PaymentRail } from './rail.js';

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
