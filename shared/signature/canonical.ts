import { createHash } from 'node:crypto';

/**
 * The canonical string a hub signature covers (spec: Authentication › Request signature and
 * Account-route signature). Six lines for proxied traffic, seven on the account routes, where the
 * last line names what the signature may be used for.
 */

/** Purpose lines of the account routes; the verifier takes the purpose from the route it matched. */
export const SIGNATURE_PURPOSES = ['access.write', 'access.mint'] as const;
export type SignaturePurpose = (typeof SIGNATURE_PURPOSES)[number];

export type CanonicalInput = {
  /** Unix seconds, the `t` of the header. */
  timestamp: number;
  method: string;
  /** The raw request target as sent on the wire: path and query, never normalized or re-encoded. */
  pathAndQuery: string;
  /** Lowercase hex SHA-256 of the raw body bytes (`sha256Hex`); the empty body has a digest too. */
  bodySha256: string;
  /** The `hub-request-id` header value. */
  requestId: string;
  /** The `hub-agent-id` header value; `undefined` (header absent) signs as an empty line. */
  agentId: string | undefined;
  /** Only on the account routes. */
  purpose?: SignaturePurpose;
};

export function sha256Hex(body: Uint8Array | string): string {
  return createHash('sha256').update(body).digest('hex');
}

// A line break inside a field would let one field's text pass for the next line, so two different
// requests could share a canonical string. HTTP cannot carry one in a request target or a header
// value; a value that has one was not taken from a real request.
const LINE_BREAK = /[\r\n]/;

export function isSignaturePurpose(value: unknown): value is SignaturePurpose {
  return value === 'access.write' || value === 'access.mint';
}

/** Returns the canonical string, or undefined when a field could not have come from an HTTP request. */
export function tryCanonicalString(input: CanonicalInput): string | undefined {
  const { timestamp, method, pathAndQuery, bodySha256, requestId, agentId = '', purpose } = input;
  if (!Number.isSafeInteger(timestamp) || timestamp < 0) return undefined;
  if (LINE_BREAK.test(method) || LINE_BREAK.test(pathAndQuery) || LINE_BREAK.test(bodySha256)) return undefined;
  if (LINE_BREAK.test(requestId) || LINE_BREAK.test(agentId)) return undefined;
  const lines = `${timestamp}\n${method.toUpperCase()}\n${pathAndQuery}\n${bodySha256}\n${requestId}\n${agentId}`;
  if (purpose === undefined) return lines;
  if (!isSignaturePurpose(purpose)) return undefined;
  return `${lines}\n${purpose}`;
}

/** The canonical string; throws a `TypeError` for input no HTTP request could carry (a caller bug). */
export function canonicalString(input: CanonicalInput): string {
  const canonical = tryCanonicalString(input);
  if (canonical === undefined) {
    throw new TypeError('canonical input has a line break in a field, a bad timestamp or an unknown purpose');
  }
  return canonical;
}
