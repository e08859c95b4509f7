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
