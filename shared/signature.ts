import { createHash, createHmac, timingSafeEqual } from 'node:crypto';

/**
 * hub's request signature, scheme `v1` (spec: Authentication › Request signature, Account-route
 * signature). The proxy signs every request it forwards and the control-plane every account write
 * and key mint; the seller SDK verifies them. Published vectors: docs/signature-vectors.json.
 *
 * v1 = lowercase hex HMAC-SHA256, keyed with the UTF-8 bytes of the whole signing secret
 * (`hubsk_…`), over the UTF-8 bytes of the canonical string.
 */

/** How far `t` may be from the verifier's clock, in the past or the future. */
export const SIGNATURE_TOLERANCE_SECONDS = 300;

export type SignatureFailure = 'missing_or_malformed_signature' | 'stale_timestamp' | 'unknown_kid' | 'invalid_signature';
export type SignatureVerification =
  | { ok: true; kid: string; sandbox: boolean; timestamp: number }
  | { ok: false; reason: SignatureFailure };

export type SigningInput = CanonicalInput & { kid: string; secret: string; sandbox?: boolean };

/** The request as received (`timestamp` comes from the header), plus how to check it. */
export type VerifyInput = Omit<CanonicalInput, 'timestamp'> & {
  header: unknown;
  /** The secret for a kid, or undefined when the kid is unknown (or retired). */
  secretFor: (kid: string) => string | undefined;
  /** The verifier's clock in unix seconds; defaults to now. */
  now?: number;
  toleranceSeconds?: number;
};

function hmac(secret: string, canonical: string): Buffer {
  return createHmac('sha256', secret).update(canonical, 'utf8').digest();
}

/** The `hub-signature` header value for one request. One HMAC and some string joins: a few µs. */
export function signatureHeader(input: SigningInput): string {
  if (!input.secret) throw new TypeError('signing needs a non-empty secret');
  const v1 = hmac(input.secret, canonicalString(input)).toString('hex');
  return formatSignatureHeader({ timestamp: input.timestamp, kid: input.kid, v1, sandbox: input.sandbox });
}

export function nowSeconds(): number {
  return Math.floor(Date.now() / 1000);
}

/**
 * Checks a `hub-signature` header against the request it arrived with. The checks run cheapest
 * first: grammar, clock, kid, then the HMAC, compared in constant time.
 *
 * A signature made for one purpose fails every other: the purpose line is part of the signed text,
 * so a six-line (proxied) signature, a mint signature on the write route and a write signature on
 * the mint route all come out as `invalid_signature`.
 */
export function verifySignature(args: VerifyInput): SignatureVerification {
  const parsed = parseSignatureHeader(args.header);
  if (!parsed.ok) return parsed;

  const now = args.now ?? nowSeconds();
  const tolerance = args.toleranceSeconds ?? SIGNATURE_TOLERANCE_SECONDS;
  // Written so that a NaN clock or tolerance fails closed.
  if (!(Math.abs(now - parsed.timestamp) <= tolerance)) return { ok: false, reason: 'stale_timestamp' };

  const secret = args.secretFor(parsed.kid);
  // An empty secret is a configuration slip, and an HMAC key anyone could use: never a match.
  if (!secret) return { ok: false, reason: 'unknown_kid' };

  // The purpose is the verifier's: that of the route it matched, never read from the request.
  const canonical = tryCanonicalString({ ...args, timestamp: parsed.timestamp });
  if (canonical === undefined) return { ok: false, reason: 'invalid_signature' };

  // The parser admits only 64 lowercase hex digits, so this decodes to exactly 32 bytes.
  const expected = hmac(secret, canonical);
  const received = Buffer.from(parsed.v1, 'hex');
  if (!timingSafeEqual(expected, received)) return { ok: false, reason: 'invalid_signature' };
  return { ok: true, kid: parsed.kid, sandbox: parsed.sandbox, timestamp: parsed.timestamp };
}

// ─── The canonical string ───────────────────────────────────────────────────────────────────────

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

// ─── The header ─────────────────────────────────────────────────────────────────────────────────

/**
 * The `hub-signature` header grammar: `t=<unix seconds>,kid=<hsec_…>,v1=<64 lowercase hex>`, with
 * `,sb=1` appended on sandbox traffic.
 *
 * Parsing is strict: the fields in that order, no spaces, no repeats, nothing else. hub is the only
 * signer, so anything that differs from what it writes was not written by it, and refusing it is
 * cheaper than guessing. It is also total: any value at all (a string array, a number, a megabyte
 * of junk) gives a result, never an exception.
 */

export type ParsedSignatureHeader = { ok: true; timestamp: number; kid: string; v1: string; sandbox: boolean };
export type SignatureHeaderParseResult = ParsedSignatureHeader | { ok: false; reason: 'missing_or_malformed_signature' };

export type SignatureHeaderFields = { timestamp: number; kid: string; v1: string; sandbox?: boolean };

// Twelve digits cover unix seconds for the next thirty thousand years and keep `t` a safe integer;
// no leading zeros, so the number prints back as the same text the signer put in the canonical string.
const HEADER = /^t=(0|[1-9][0-9]{0,11}),kid=(hsec_[0-9A-Za-z]{24}),v1=([0-9a-f]{64})(,sb=1)?$/;
// The longest header the grammar allows; longer input is refused before the regex sees it.
const MAX_HEADER_LENGTH = 't=,kid=,v1=,sb=1'.length + 12 + 29 + 64;

const MALFORMED = { ok: false, reason: 'missing_or_malformed_signature' } as const;

export function parseSignatureHeader(header: unknown): SignatureHeaderParseResult {
  if (typeof header !== 'string' || header.length > MAX_HEADER_LENGTH) return MALFORMED;
  const match = HEADER.exec(header);
  if (!match) return MALFORMED;
  return { ok: true, timestamp: Number(match[1]), kid: match[2]!, v1: match[3]!, sandbox: match[4] !== undefined };
}

export function formatSignatureHeader(fields: SignatureHeaderFields): string {
  return `t=${fields.timestamp},kid=${fields.kid},v1=${fields.v1}${fields.sandbox ? ',sb=1' : ''}`;
}
