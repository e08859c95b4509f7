/**
 * x402 v2 over HTTP: the challenge rides in `payment-required`, the signed payment in
 * `payment-signature` (v1 clients: `x-payment`), the settle receipt in `payment-response`; each is
 * base64 of a JSON document. The proxy writes and reads them at the pay URL; the control-plane's
 * sandbox drives and "try it" read and write them as an agent does.
 */
export const X402_VERSION = 2;

export const X402_HEADERS = {
  required: 'payment-required',
  signature: 'payment-signature',
  v1Payment: 'x-payment',
  response: 'payment-response',
} as const;

export function encodeHeaderJson(value: unknown): string {
  return Buffer.from(JSON.stringify(value), 'utf8').toString('base64');
}

/** The JSON document a header carries; throws when it is not base64 of JSON. */
export function decodeHeaderJson(header: string): unknown {
  return JSON.parse(Buffer.from(header.trim(), 'base64').toString('utf8'));
}
