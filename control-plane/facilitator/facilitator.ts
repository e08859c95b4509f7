import type { PaymentPayload, PaymentRequirements, SupportedResponse } from '../../shared/payments/x402-wire.js';
import type { SettleResult, VerifyResult } from './results.js';

/**
 * Checks and settles x402 payments; the proxy talks to nothing else about money. Modelled on
 * x402's facilitator API, so a remote facilitator (`HttpFacilitator`) and hub's in-process one
 * (`LocalFacilitator`) are interchangeable per deployment.
 *
 * Contract for implementations:
 * - `verify` answers whether the payment would settle now. A payment that is wrong answers
 *   `{ isValid: false, reason }`; a facilitator that cannot answer (RPC or facilitator down)
 *   throws `FacilitatorUnavailableError`, which is not the payer's fault.
 * - `settle` never throws for a payment: it answers settled, pending or failed. `failed` means
 *   provably nothing moved; anything uncertain is `pending`. Calling `settle` again with the same
 *   payment is safe and is how a pending settlement is finished.
 */
export interface Facilitator {
  verify(paymentPayload: PaymentPayload, paymentRequirements: PaymentRequirements): Promise<VerifyResult>;
  settle(paymentPayload: PaymentPayload, paymentRequirements: PaymentRequirements): Promise<SettleResult>;
  /** The (x402 version, scheme, network) kinds this facilitator handles, and its settling addresses. */
  supported(): Promise<SupportedResponse>;
}

/**
 * A facilitator could not give an answer: the remote facilitator or the chain's RPC timed out,
 * was unreachable, or answered something that is not an x402 response. Not the payer's fault, so
 * the proxy answers it with a 503, never with a 402.
 */
export class FacilitatorUnavailableError extends Error {
  override name = 'FacilitatorUnavailableError';

  constructor(
    readonly kind: 'timeout' | 'network' | 'http_status' | 'malformed_response',
    message: string,
    readonly status?: number,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}
