import type { IncomingMessage } from 'node:http';
import type { PaymentPayload } from '../../shared/payments/x402-wire.js';
import { readMppProof } from './mpp.js';
import { readX402Proof } from './x402-headers.js';

/**
 * The payment a request carries, whichever protocol it came in: x402 (`payment-signature`,
 * `x-payment`) or MPP (`authorization: Payment`, `payment-authorization`, `authorization: Bearer`).
 * An MPP credential is restated as the x402 `exact` payment it authorizes, so one claim and one
 * settlement path serve both.
 */
export type PaymentProof =
  | { kind: 'none' }
  | { kind: 'malformed'; why: string }
  | { kind: 'refused'; reason: string }
  | { kind: 'paid'; protocol: 'x402' | 'mpp'; paymentId: string; payload: PaymentPayload; carriedInAuthorization: boolean };

export function readPaymentProof(req: IncomingMessage, mppSecret: string): PaymentProof {
  const x402 = readX402Proof(req.headers);
  if (x402.kind === 'malformed') return x402;
  if (x402.kind === 'x402')
    return { kind: 'paid', protocol: 'x402', paymentId: x402.paymentId, payload: x402.payload, carriedInAuthorization: false };
  const mpp = readMppProof(req, mppSecret);
  if (mpp.kind !== 'mpp') return mpp;
  return {
    kind: 'paid',
    protocol: 'mpp',
    paymentId: mpp.paymentId,
    payload: mpp.payload,
    carriedInAuthorization: mpp.carrier.startsWith('authorization'),
  };
}
