import { base64urlEncode, decodeBase64urlJson, failed, isDatetime, isPlainObject, type Parsed, parsed } from './encoding.js';
import { EVM_METHOD } from './evm-charge.js';

/**
 * `Payment-Receipt: <base64url JSON { method, reference, status, timestamp }>`, on 2xx responses to
 * a paid request only: MPP reports failures as a 402 with a fresh challenge, never as a receipt,
 * which is why `status` has the one value `success`.
 */

export const PAYMENT_RECEIPT_HEADER = 'payment-receipt';

export type Receipt = {
  /** The payment method, e.g. `evm`. */
  method: string;
  /** Method-specific: for `evm`, the settlement transaction hash. */
  reference: string;
  status: 'success';
  /** RFC 3339. */
  timestamp: string;
  externalId?: string;
};

export type ReceiptFailure = 'malformed_receipt';

// What a receipt header reasonably holds; anything longer is not one of ours.
const MAX_RECEIPT_LENGTH = 4096;

export function createReceipt(fields: { reference: string; method?: string; timestamp?: Date; externalId?: string }): Receipt {
  return {
    method: fields.method ?? EVM_METHOD,
    reference: fields.reference,
    status: 'success',
    timestamp: (fields.timestamp ?? new Date()).toISOString(),
    ...(fields.externalId !== undefined ? { externalId: fields.externalId } : {}),
  };
}

export function serializeReceipt(receipt: Receipt): string {
  return base64urlEncode(JSON.stringify(receipt));
}

/** A `Payment-Receipt` value; total, like every parser here. Unknown fields are dropped. */
export function parseReceipt(value: unknown): Parsed<Receipt, ReceiptFailure> {
  const bad = (detail: string) => failed('malformed_receipt', detail);
  if (typeof value !== 'string' || value.length > MAX_RECEIPT_LENGTH) return bad('the receipt is not a short string');
  const json = decodeBase64urlJson(value.trim());
  if (!isPlainObject(json)) return bad('the receipt is not base64url of a JSON object');
  const { method, reference, status, timestamp, externalId } = json;
  if (typeof method !== 'string' || method.length === 0) return bad('method must be a non-empty string');
  if (typeof reference !== 'string') return bad('reference must be a string');
  if (status !== 'success') return bad('status must be "success"');
  if (!isDatetime(timestamp)) return bad('timestamp must be RFC 3339');
  if (externalId !== undefined && typeof externalId !== 'string') return bad('externalId must be a string');
  return parsed({ method, reference, status, timestamp, ...(externalId !== undefined ? { externalId } : {}) });
}
