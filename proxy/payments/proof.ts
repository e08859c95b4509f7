import { unfitJson } from '../../runtime/json-body.js';
import type { RequestView } from '../../runtime/request-view.js';
import type { PaymentProtocol } from '../../shared/contract.js';
import { ApiError } from '../../shared/errors.js';
import { decodeHeaderJson, X402_HEADERS } from '../../shared/payments/x402-headers.js';
import { type PaymentPayload, paymentPayloadSchema } from '../../shared/payments/x402-wire.js';
import { readMppCredential } from './mpp.js';

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
  | { kind: 'paid'; protocol: PaymentProtocol; paymentId: string; payload: PaymentPayload; carriedInAuthorization: boolean }
  /** MPP's `stripe` charge: a shared payment token for a purchase's card price (never a call's). */
  | { kind: 'card'; paymentId: string; spt: string; carriedInAuthorization: boolean };

const NONE: PaymentProof = Object.freeze({ kind: 'none' });
const MAX_X402_HEADER_LENGTH = 16_384;
const PAYMENT_ID = /^apay_[0-9A-Za-z]{24}$/;

/**
 * The payment as a request may go on with: none, or paid. A malformed header is 400
 * `invalid_request`; a credential already refused (unknown challenge, expired, wrong realm) is 402
 * `settlement_failed`, so the agent starts over for a fresh challenge.
 */
export function usableProof(proof: PaymentProof): Extract<PaymentProof, { kind: 'none' | 'paid' | 'card' }> {
  if (proof.kind === 'malformed') throw new ApiError('invalid_request', `Malformed payment header: ${proof.why}.`);
  if (proof.kind === 'refused') throw new ApiError('payment_required', 'settlement_failed', { settlementReason: proof.reason });
  return proof;
}

/** Reads the request's payment; never throws on garbage. */
export function readPaymentProof(req: RequestView, mppSecret: string): PaymentProof {
  const x402 = req.headers[X402_HEADERS.signature] ?? req.headers[X402_HEADERS.v1Payment];
  if (x402 !== undefined) return readX402Payment(x402);
  const mpp = readMppCredential(req, mppSecret);
  if (mpp.kind === 'card') {
    return { kind: 'card', paymentId: mpp.paymentId, spt: mpp.spt, carriedInAuthorization: mpp.carrier.startsWith('authorization') };
  }
  if (mpp.kind !== 'mpp') return mpp.kind === 'none' ? NONE : mpp;
  return {
    kind: 'paid',
    protocol: 'mpp',
    paymentId: mpp.paymentId,
    payload: mpp.payload,
    carriedInAuthorization: mpp.carrier.startsWith('authorization'),
  };
}

function readX402Payment(raw: string | string[]): PaymentProof {
  if (Array.isArray(raw) || raw.length > MAX_X402_HEADER_LENGTH) return { kind: 'malformed', why: 'send exactly one payment header' };
  let json: unknown;
  try {
    json = decodeHeaderJson(raw);
  } catch {
    return { kind: 'malformed', why: 'the payment header is not base64-encoded JSON' };
  }
  // It goes on to the control-plane (and a facilitator) as JSON, and is stored.
  const unfit = unfitJson(json, 'it');
  if (unfit) return { kind: 'malformed', why: unfit };
  const parsed = paymentPayloadSchema.safeParse(json);
  if (!parsed.success) return { kind: 'malformed', why: 'the payment header is not an x402 v2 payment payload' };
  const paymentId = parsed.data.accepted.extra.paymentId;
  if (typeof paymentId !== 'string' || !PAYMENT_ID.test(paymentId)) {
    return { kind: 'malformed', why: 'the accepted requirements name no hub payment (extra.paymentId)' };
  }
  return { kind: 'paid', protocol: 'x402', paymentId, payload: parsed.data, carriedInAuthorization: false };
}
