import { createHmac } from 'node:crypto';
import { safeEqual } from '../../tokens.js';
import { formatAuthParam, isHeaderText, parseAuthChallenges } from './auth-params.js';
import { base64urlEncode, canonicalJson, decodeBase64urlJson, failed, isDatetime, isPlainObject, type Parsed, parsed } from './encoding.js';

/**
 * An MPP challenge: `WWW-Authenticate: Payment id="…", realm="…", method="…", intent="…",
 * request="<base64url JSON>"[, description][, digest][, expires][, header][, opaque]`.
 *
 * The id is an HMAC-SHA256, keyed with a server secret, over the other parameters, so the server
 * that issued a challenge recognises it when a credential echoes it back, and knows every echoed
 * field is its own, without storing anything. The HMAC input is the one mppx 0.11 uses (seven
 * `|`-joined slots: realm, method, intent, request, expires, digest, opaque; a non-default
 * `header` goes in before opaque), so ids made here verify with mppx and the other way round.
 */

export const PAYMENT_SCHEME = 'Payment';
export const WWW_AUTHENTICATE_HEADER = 'www-authenticate';

export type Challenge = {
  id: string;
  /** Who asks for payment: the pay URL's host. */
  realm: string;
  /** Payment method, e.g. `evm`. */
  method: string;
  /** e.g. `charge`. */
  intent: string;
  /** Method-specific terms; on the wire, base64url of its canonical JSON. */
  request: Record<string, unknown>;
  /** RFC 3339 instant after which the challenge is refused. */
  expires?: string;
  /** `sha-256=:<base64>:` of the challenged request's body. */
  digest?: string;
  /** Server correlation data, base64url; clients echo it untouched. */
  opaque?: string;
  description?: string;
  /** The header the client should send its credential in, when not `Authorization`. */
  header?: string;
};

export type ChallengeFields = Omit<Challenge, 'id'>;

export type ChallengeFailure = 'malformed_challenge' | 'no_payment_challenge';

/** mppx refuses larger `request` parameters; so do we. */
export const MAX_REQUEST_PARAM_LENGTH = 16 * 1024;

const LOWER_TOKEN = /^[a-z][a-z0-9:_-]{0,63}$/;
// A field-name token, less `|` (see SLOT_TEXT).
const HEADER_NAME = /^[!#$%&'*+.^_`~0-9A-Za-z-]{1,64}$/;
// Printable ASCII without `|`: the HMAC input joins slots with `|`, so no slot that can be empty or
// free text may contain one, or fields could be shifted from one slot to the next.
const SLOT_TEXT = /^[\x20-\x7b\x7d\x7e]*$/;
const BASE64URL_TEXT = /^[A-Za-z0-9_-]+={0,2}$/;

/** Field → check, for fields that are optional strings. */
const optionalChecks: Record<'expires' | 'digest' | 'opaque' | 'description' | 'header', (value: string) => boolean> = {
  expires: isDatetime,
  digest: (v) => v.length <= 256 && v.startsWith('sha-256=') && SLOT_TEXT.test(v),
  opaque: (v) => v.length <= 4096 && BASE64URL_TEXT.test(v),
  description: (v) => v.length <= 1024 && isHeaderText(v),
  header: (v) => HEADER_NAME.test(v),
};

/** The wire form of `request`: base64url of canonical JSON. Undefined if it is not JSON data. */
function encodeRequest(request: Record<string, unknown>): string | undefined {
  const json = canonicalJson(request);
  return json === undefined ? undefined : base64urlEncode(json);
}

/**
 * A challenge from its wire fields (`request` still encoded), as they come from header params or
 * from the challenge a credential echoes. Every check a challenge must pass lives here, and
 * `signChallenge` runs it too, so hub never issues a challenge it would refuse.
 */
export function challengeFromWire(wire: Record<string, unknown>): Parsed<Challenge, 'malformed_challenge'> {
  const { request } = wire;
  if (typeof request !== 'string' || request.length > MAX_REQUEST_PARAM_LENGTH)
    return checkedChallenge(wire, {}, 'request must be base64url text of at most 16 KiB');
  const decoded = decodeBase64urlJson(request);
  if (!isPlainObject(decoded) || encodeRequest(decoded) === undefined)
    return checkedChallenge(wire, {}, 'request must encode a JSON object');
  return checkedChallenge(wire, decoded);
}

/**
 * Every check of a challenge but its `request`'s encoding, which the caller made or checked
 * (`request` decoded; `requestRefused` says why it is refused, after the fields before it).
 */
function checkedChallenge(
  wire: Record<string, unknown>,
  request: Record<string, unknown>,
  requestRefused?: string,
): Parsed<Challenge, 'malformed_challenge'> {
  const bad = (detail: string) => failed('malformed_challenge', detail);
  const { id, realm, method, intent } = wire;
  if (typeof id !== 'string' || id.length === 0 || id.length > 256) return bad('id must be a non-empty string');
  if (typeof realm !== 'string' || realm.length === 0 || realm.length > 256 || !SLOT_TEXT.test(realm))
    return bad('realm must be printable ASCII without "|"');
  if (typeof method !== 'string' || !LOWER_TOKEN.test(method)) return bad('method must be a lowercase token');
  if (typeof intent !== 'string' || !LOWER_TOKEN.test(intent)) return bad('intent must be a lowercase token');
  if (requestRefused) return bad(requestRefused);

  const challenge: Challenge = { id, realm, method, intent, request };
  for (const name of Object.keys(optionalChecks) as (keyof typeof optionalChecks)[]) {
    const value = wire[name];
    if (value === undefined) continue;
    if (typeof value !== 'string' || !optionalChecks[name](value)) return bad(`${name} is malformed`);
    challenge[name] = value;
  }
  return parsed(challenge);
}

/** The challenge's fields as they travel: `request` encoded, absent fields left out. */
export function challengeToWire(challenge: Challenge): Record<string, string> {
  const signed = signedRequests.get(challenge);
  const request = signed?.request === challenge.request ? signed.encoded : encodeRequest(challenge.request);
  if (request === undefined) throw new TypeError('challenge request is not JSON data');
  const wire: Record<string, string> = {
    id: challenge.id,
    realm: challenge.realm,
    method: challenge.method,
    intent: challenge.intent,
    request,
  };
  for (const name of Object.keys(optionalChecks) as (keyof typeof optionalChecks)[]) {
    const value = challenge[name];
    if (value !== undefined) wire[name] = value;
  }
  return wire;
}

function hmacInput(fields: ChallengeFields, request: string): string {
  const slots = [fields.realm, fields.method, fields.intent, request, fields.expires ?? '', fields.digest ?? ''];
  // mppx leaves `Authorization` (the default) out of the binding, so challenges without a header
  // param keep the original seven slots.
  if (fields.header !== undefined && fields.header.toLowerCase() !== 'authorization') slots.push(fields.header);
  slots.push(fields.opaque ?? '');
  return slots.join('|');
}

function computeId(fields: ChallengeFields, secret: string, request = encodeRequest(fields.request)): string | undefined {
  if (request === undefined) return undefined;
  return createHmac('sha256', secret).update(hmacInput(fields, request), 'utf8').digest('base64url');
}

/**
 * The wire form of the `request` of each challenge `signChallenge` made, so serializing it does
 * not encode it again. A challenge is data once made: one whose `request` was changed afterwards
 * is a new object (`{ ...challenge, request }`), encoded afresh.
 */
const signedRequests = new WeakMap<Challenge, { request: Record<string, unknown>; encoded: string }>();

/**
 * A challenge whose id binds all of `fields` under `secret`. Throws on fields hub would refuse:
 * the checks of `challengeFromWire`, on the request as encoded once here.
 */
export function signChallenge(fields: ChallengeFields, secret: string): Challenge {
  if (!secret) throw new TypeError('challenge ids need a non-empty secret');
  const { request, ...rest } = fields;
  const encoded = isPlainObject(request) ? encodeRequest(request) : undefined;
  if (encoded === undefined) throw new TypeError('challenge request is not JSON data');
  const id = computeId(fields, secret, encoded) as string;
  const wire = { ...rest, id, request: encoded };
  const tooLong = encoded.length > MAX_REQUEST_PARAM_LENGTH ? 'request must be base64url text of at most 16 KiB' : undefined;
  const checked = checkedChallenge(wire, structuredCopy(request), tooLong);
  if (!checked.ok) throw new TypeError(`invalid challenge: ${checked.detail}`);
  signedRequests.set(checked.value, { request: checked.value.request, encoded });
  return checked.value;
}

/** The request as a challenge keeps it: a copy, so the caller's object changing later changes nothing signed. */
function structuredCopy(request: Record<string, unknown>): Record<string, unknown> {
  return JSON.parse(JSON.stringify(request)) as Record<string, unknown>;
}

/**
 * Whether `challenge` was issued under `secret` with exactly these fields. The comparison takes
 * the same time wherever the ids differ, so the id cannot be guessed byte by byte.
 */
export function verifyChallengeId(challenge: Challenge, secret: string): boolean {
  if (!secret) return false;
  const expected = computeId(challenge, secret);
  if (expected === undefined) return false;
  return safeEqual(challenge.id, expected);
}

/** The `WWW-Authenticate` value for one challenge. */
export function serializeChallenge(challenge: Challenge): string {
  const wire = challengeToWire(challenge);
  const order = ['id', 'realm', 'method', 'intent', 'request', 'description', 'digest', 'expires', 'header', 'opaque'];
  const params = order.filter((name) => wire[name] !== undefined).map((name) => formatAuthParam(name, wire[name]!));
  return `${PAYMENT_SCHEME} ${params.join(', ')}`;
}

/**
 * Every well-formed `Payment` challenge in a `WWW-Authenticate` value. Other schemes are skipped,
 * and so is a Payment offer that is incomplete or malformed, so one bad offer does not hide the
 * rest; the failure says why when none is usable.
 */
export function parseChallenges(header: unknown): Parsed<Challenge[], ChallengeFailure> {
  const all = parseAuthChallenges(header);
  if (!all) return failed('malformed_challenge', 'not a valid WWW-Authenticate value');
  const challenges: Challenge[] = [];
  let firstRefusal: ReturnType<typeof failed<'malformed_challenge'>> | undefined;
  for (const auth of all) {
    if (auth.scheme.toLowerCase() !== PAYMENT_SCHEME.toLowerCase()) continue;
    const challenge =
      auth.token68 === undefined
        ? challengeFromWire(auth.params)
        : failed('malformed_challenge', 'a Payment challenge takes parameters, not a token68');
    if (challenge.ok) challenges.push(challenge.value);
    else firstRefusal ??= challenge;
  }
  if (challenges.length) return parsed(challenges);
  return firstRefusal ?? failed('no_payment_challenge', 'no Payment challenge in the header');
}

/** The first `Payment` challenge in a `WWW-Authenticate` value. */
export function parseChallenge(header: unknown): Parsed<Challenge, ChallengeFailure> {
  const all = parseChallenges(header);
  return all.ok ? parsed(all.value[0]!) : all;
}

/** An `expires` value `seconds` from `nowMs`, to whole seconds (clients sign `validBefore` from it). */
export function expiresAfter(seconds: number, nowMs: number = Date.now()): string {
  return new Date(Math.floor(nowMs / 1000 + seconds) * 1000).toISOString().replace('.000Z', 'Z');
}

/** Whether the challenge has expired at `nowMs`. A challenge without `expires` counts as expired. */
export function isChallengeExpired(challenge: Pick<Challenge, 'expires'>, nowMs: number = Date.now()): boolean {
  if (challenge.expires === undefined) return true;
  return !(Date.parse(challenge.expires) > nowMs);
}
