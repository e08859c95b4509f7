import { createHmac, timingSafeEqual } from 'node:crypto';
import { tryCanonicalString, canonicalString, type CanonicalInput } from './signature/canonical.js';
import { formatSignatureHeader, parseSignatureHeader } from './signature/header.js';

/**
 * hub's request signature, scheme `v1` (spec: Authentication › Request signature, Account-route
 * signature). The proxy signs every request it forwards and the control-plane every account write
 * and key mint; the seller SDK verifies them. Published vectors: docs/signature-vectors.json.
 *
 * v1 = lowercase hex HMAC-SHA256, keyed with the UTF-8 bytes of the whole signing secret
 * (`hubsk_…`), over the UTF-8 bytes of the canonical string.
 */

export { canonicalString, isSignaturePurpose, sha256Hex, SIGNATURE_PURPOSES } from './signature/canonical.js';
export type { CanonicalInput, SignaturePurpose } from './signature/canonical.js';
export { formatSignatureHeader, parseSignatureHeader } from './signature/header.js';
export type { ParsedSignatureHeader, SignatureHeaderParseResult } from './signature/header.js';

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
