import { paymentPayloadSchema, type PaymentPayload } from '../../shared/payments/x402-wire.js';

/**
 * x402 v2 over HTTP: the challenge rides in `payment-required`, the signed payment in
 * `payment-signature` (v1 clients: `x-payment`), the settle receipt in `payment-response`; each is
 * base64 of a JSON document.
 */
export const X402_VERSION = 2;

export function encodeHeaderJson(value: unknown): string {
  return Buffer.from(JSON.stringify(value), 'utf8').toString('base64');
}

export type PaymentProof =
  | { kind: 'none' }
  | { kind: 'malformed'; why: string }
  | { kind: 'x402'; payload: PaymentPayload; paymentId: string };

const MAX_PROOF_LENGTH = 16_384;

/** Reads an x402 payment from the request headers; never throws on garbage. */
export function readX402Proof(headers: Record<string, string | string[] | undefined>): PaymentProof {
  const raw = headers['payment-signature'] ?? headers['x-payment'];
  if (raw === undefined) return { kind: 'none' };
  if (Array.isArray(raw) || raw.length > MAX_PROOF_LENGTH) return { kind: 'malformed', why: 'send exactly one payment header' };
  let json: unknown;
  try {
    json = JSON.parse(Buffer.from(raw.trim(), 'base64').toString('utf8'));
  } catch {
    return { kind: 'malformed', why: 'the payment header is not base64-encoded JSON' };
  }
  const parsed = paymentPayloadSchema.safeParse(json);
  if (!parsed.success) return { kind: 'malformed', why: 'the payment header is not an x402 v2 payment payload' };
  const paymentId = parsed.data.accepted.extra.paymentId;
  if (typeof paymentId !== 'string' || !/^apay_[0-9A-Za-z]{24}$/.test(paymentId)) {
    return { kind: 'malformed', why: 'the accepted requirements name no hub payment (extra.paymentId)' };
  }
  return { kind: 'x402', payload: parsed.data, paymentId };
}
