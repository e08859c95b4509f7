import { type Challenge, challengeFromWire, challengeToWire, PAYMENT_SCHEME } from './challenge.js';
import { base64urlEncode, decodeBase64urlJson, failed, isPlainObject, type Parsed, parsed } from './encoding.js';

/**
 * An MPP credential: base64url JSON `{ challenge, payload, source? }`, where `challenge` echoes the
 * challenge being answered (its `request` still base64url), `payload` is the method's proof of
 * payment and `source` names the payer (`did:pkh:…`).
 *
 * hub takes it from three places, most specific first:
 * - `Payment-Authorization: [Payment ]<credential>`, for apps whose `Authorization` carries
 *   something else;
 * - `Authorization: Payment <credential>`, what mppx sends by default;
 * - `Authorization: Bearer <credential>`, as hub's interface spec has it. A bearer value is only a
 *   credential when it decodes as one; anything else (an agent token) is left to the caller.
 *
 * Parsing is total: any header value gives a credential or a reason, never an exception.
 */

export const AUTHORIZATION_HEADER = 'authorization';
export const PAYMENT_AUTHORIZATION_HEADER = 'payment-authorization';

export type Credential = {
  challenge: Challenge;
  /** Method-specific; see `evm-charge.ts` for `evm`. */
  payload: unknown;
  source?: string;
};

export type CredentialFailure =
  | 'credential_too_large'
  | 'invalid_encoding'
  | 'invalid_shape'
  | 'malformed_challenge'
  | 'multiple_credentials';

/** Where a credential was found. */
export type CredentialCarrier = 'payment-authorization' | 'authorization-payment' | 'authorization-bearer';

export type CredentialLookup =
  | { status: 'absent' }
  | { status: 'invalid'; carrier: CredentialCarrier; reason: CredentialFailure; detail: string }
  | { status: 'present'; carrier: CredentialCarrier; credential: Credential };

/** Headers as node:http hands them over: lowercase names, repeated ones as arrays. */
export type IncomingHeaders = Readonly<Record<string, string | string[] | undefined>>;

// Node refuses request heads over 16 KiB by default; this only bounds work on larger setups.
export const MAX_CREDENTIAL_LENGTH = 32 * 1024;

const SCHEME_PREFIX = /^payment[ \t]+/i;
const BEARER = /^bearer[ \t]+([A-Za-z0-9_=-]+)[ \t]*$/i;

/** `Payment <base64url JSON>`, the value of `Authorization` (or `Payment-Authorization`). */
export function serializeCredential(credential: Credential): string {
  const wire = {
    challenge: challengeToWire(credential.challenge),
    payload: credential.payload,
    ...(credential.source !== undefined ? { source: credential.source } : {}),
  };
  return `${PAYMENT_SCHEME} ${base64urlEncode(JSON.stringify(wire))}`;
}

/** The base64url part alone: what follows `Payment ` (or `Bearer `). */
export function decodeCredential(token: unknown): Parsed<Credential, CredentialFailure> {
  if (typeof token !== 'string') return failed('invalid_encoding', 'the credential is not text');
  if (token.length > MAX_CREDENTIAL_LENGTH)
    return failed('credential_too_large', `the credential is longer than ${MAX_CREDENTIAL_LENGTH} characters`);
  const json = decodeBase64urlJson(token.trim());
  if (json === undefined) return failed('invalid_encoding', 'the credential is not base64url of UTF-8 JSON');
  if (!isPlainObject(json) || !isPlainObject(json.challenge) || !('payload' in json)) {
    return failed('invalid_shape', 'the credential must be an object with challenge and payload');
  }
  if (json.source !== undefined && (typeof json.source !== 'string' || json.source.length > 256)) {
    return failed('invalid_shape', 'source must be a string');
  }
  const challenge = challengeFromWire(json.challenge);
  if (!challenge.ok) return challenge;
  return parsed({ challenge: challenge.value, payload: json.payload, ...(json.source !== undefined ? { source: json.source } : {}) });
}

/** A whole `Payment <credential>` header value. */
export function parseCredential(value: unknown): Parsed<Credential, CredentialFailure> {
  if (typeof value !== 'string') return failed('invalid_encoding', 'the header is not text');
  const match = SCHEME_PREFIX.exec(value);
  if (!match) return failed('invalid_encoding', 'the header does not use the Payment scheme');
  return decodeCredential(value.slice(match[0].length));
}

function single(value: string | string[] | undefined): string | undefined | null {
  if (Array.isArray(value)) return value.length === 0 ? undefined : value.length === 1 ? value[0] : null;
  return value;
}

function listItems(value: string): string[] {
  return value
    .split(',')
    .map((item) => item.trim())
    .filter((item) => item.length > 0);
}

/** The Payment credential in `Payment-Authorization`, if any: bare or with its scheme. */
function fromPaymentAuthorization(raw: string): string[] {
  return listItems(raw).map((item) => {
    const match = SCHEME_PREFIX.exec(item);
    return match ? item.slice(match[0].length) : item;
  });
}

/** The Payment credentials in an `Authorization` list (RFC 9110 allows several schemes). */
function fromAuthorization(raw: string): string[] {
  return listItems(raw).flatMap((item) => {
    const match = SCHEME_PREFIX.exec(item);
    return match ? [item.slice(match[0].length)] : [];
  });
}

function lookup(carrier: CredentialCarrier, tokens: string[]): CredentialLookup {
  if (new Set(tokens).size > 1)
    return { status: 'invalid', carrier, reason: 'multiple_credentials', detail: 'more than one Payment credential' };
  const result = decodeCredential(tokens[0]);
  if (!result.ok) return { status: 'invalid', carrier, reason: result.reason, detail: result.detail };
  return { status: 'present', carrier, credential: result.value };
}

/**
 * The credential a request carries, from any of the three places. Two different credentials in
 * one request are refused rather than one picked, so what hub verifies is never in doubt.
 */
export function readCredential(headers: IncomingHeaders): CredentialLookup {
  const paymentAuthorization = single(headers[PAYMENT_AUTHORIZATION_HEADER]);
  const authorization = single(headers[AUTHORIZATION_HEADER]);
  if (paymentAuthorization === null)
    return {
      status: 'invalid',
      carrier: 'payment-authorization',
      reason: 'multiple_credentials',
      detail: 'Payment-Authorization is repeated',
    };
  if (authorization === null)
    return { status: 'invalid', carrier: 'authorization-payment', reason: 'multiple_credentials', detail: 'Authorization is repeated' };

  const found: { carrier: CredentialCarrier; tokens: string[] }[] = [];
  if (paymentAuthorization !== undefined) {
    const tokens = fromPaymentAuthorization(paymentAuthorization);
    if (tokens.length > 0) found.push({ carrier: 'payment-authorization', tokens });
  }
  if (authorization !== undefined) {
    const tokens = fromAuthorization(authorization);
    if (tokens.length > 0) found.push({ carrier: 'authorization-payment', tokens });
    const bearer = BEARER.exec(authorization);
    if (bearer && looksLikeCredential(bearer[1]!)) found.push({ carrier: 'authorization-bearer', tokens: [bearer[1]!] });
  }
  if (found.length === 0) return { status: 'absent' };
  const first = found[0]!;
  const tokens = found.flatMap((f) => f.tokens);
  return lookup(first.carrier, tokens);
}

/**
 * The first base64url characters of bytes that can open a JSON object: `{`, JSON's whitespace, or
 * the UTF-8 byte-order mark the decoder drops. A character is the top six bits of the first byte.
 */
const OBJECT_FIRST_CHARACTERS = new Set([0x7b, 0x20, 0x09, 0x0a, 0x0d, 0xef].map((byte) => Buffer.from([byte]).toString('base64url')[0]!));

/**
 * Whether a bearer value is meant as a credential: it decodes to a JSON object with a challenge.
 * An agent token, or anything else, is not, and stays the caller's business.
 */
function looksLikeCredential(token: string): boolean {
  if (token.length > MAX_CREDENTIAL_LENGTH) return true;
  // Most bearer values are the seller's own tokens or hub's agent tokens, not base64url JSON:
  // decoding one fails in the UTF-8 decoder's exception, which cost an identified call ~7% of the
  // proxy's CPU. Its first character already says whether the bytes can start an object.
  if (!OBJECT_FIRST_CHARACTERS.has(token[0] ?? '')) return false;
  const json = decodeBase64urlJson(token);
  return isPlainObject(json) && 'challenge' in json;
}
