import { mediaTypeOf } from '../../runtime/media-type.js';
import type { RequestView } from '../../runtime/request-view.js';
import type { PaySeller } from '../../shared/contract.js';
import { hasPrivateMember, JOSE_MEDIA_TYPE, JWE_SUITE, JWKS_PATH, REPLY_JWK_PARAM } from '../../shared/encryption/suite.js';
import { ApiError } from '../../shared/errors.js';
import { sha256Hex } from '../../shared/signature.js';
import { type Agreement, type CompactJwe, type EcPublicJwk, parseCompactJwe, publicPoint } from './compact-jwe.js';
import type { JweCodec } from './jwe-codec.js';

/**
 * An end-to-end encrypted request (`Content-Type: application/jose`), opened: what the seller
 * receives (the plaintext, with its own content type, signed like any body) and the agent's
 * reply key, to which the seller's response is encrypted. The bytes the agent sent (the JWE)
 * stay the request's body for payments: a paid retry must resend the same JWE.
 */
export type SealedRequest = {
  kid: string;
  /** The agent's reply key as a point on P-256 (checked): the response is encrypted to it. */
  replyPoint: Buffer;
  plaintext: Buffer;
  plaintextDigest: string;
  /** From the protected header's `cty`; `application/octet-stream` when it names none. */
  contentType: string;
  /**
   * The first reply's key agreement when the codec started it beside the decryption, on a worker
   * thread (`agreeEarly`); otherwise it is asked for once the request is sent.
   */
  firstReply: Promise<Agreement> | undefined;
};

/** A P-256 coordinate in base64url: 32 bytes, 43 characters. */
const COORDINATE = /^[A-Za-z0-9_-]{43}$/;
/**
 * RFC 9110 §8.3.1: type "/" subtype *( OWS ";" OWS parameter ), a parameter's value a token or a
 * quoted string of visible ASCII and spaces (no escapes). Nothing a header field cannot carry.
 */
const MEDIA_TYPE =
  /^[!#$%&'*+.^_`|~0-9A-Za-z-]+\/[!#$%&'*+.^_`|~0-9A-Za-z-]+([ \t]*;[ \t]*[!#$%&'*+.^_`|~0-9A-Za-z-]+=("[\t \x21\x23-\x5b\x5d-\x7e]*"|[!#$%&'*+.^_`|~0-9A-Za-z-]+))*$/;

export function isSealedRequest(req: RequestView): boolean {
  return mediaTypeOf(req.headers['content-type']) === JOSE_MEDIA_TYPE;
}

/**
 * Checks an encrypted body in the spec's order (each refusal is a 400 answered before any payment
 * is asked), then decrypts it with the key its `kid` names. `othersInProgress`, the proxy's other
 * requests in progress, tells the codec whether a core is likely free for the reply's agreement. A JWE that passes every check but
 * does not decrypt (tampered, or encrypted to another key) is refused as `invalid_compact_jwe`.
 */
export async function openSealedRequest(
  codec: JweCodec,
  seller: PaySeller,
  body: Buffer,
  othersInProgress: number,
): Promise<SealedRequest> {
  if (!seller.encryptionKeys.length) {
    throw new ApiError(
      'encryption_not_configured',
      `This seller publishes no encryption keys (${JWKS_PATH} is empty): send the body in the clear.`,
    );
  }
  const jwe = parseCompactJwe(body.toString('latin1'));
  if (!jwe) {
    throw new ApiError('invalid_compact_jwe', 'Send a Compact JWE: five base64url parts joined by dots, the first a JSON object.');
  }
  assertSuite(jwe);
  const { kid } = jwe.header;
  if (typeof kid !== 'string' || !kid) {
    throw new ApiError('jwe_kid_required', `Name the seller’s key in the protected header’s kid (from ${JWKS_PATH}).`);
  }
  const key = seller.encryptionKeys.find((k) => k.kid === kid);
  if (!key) throw new ApiError('unknown_jwe_kid', 'The kid is not in the seller’s JWKS (a retired key leaves it): fetch the JWKS again.');
  const replyPoint = readReplyKey(jwe.header[REPLY_JWK_PARAM]);
  const contentType = contentTypeOf(jwe.header.cty);

  const firstReply = codec.agreeEarly(replyPoint, othersInProgress);
  firstReply?.catch(() => {}); // unused when the JWE does not open or the seller answers 402
  const plaintext = await codec.open(jwe, { kty: 'EC', crv: 'P-256', x: key.x, y: key.y, d: key.d });
  if (!plaintext) {
    throw new ApiError(
      'invalid_compact_jwe',
      'The JWE does not decrypt with the key its kid names: it was altered, or encrypted to another key.',
    );
  }
  return { kid, replyPoint, plaintext, plaintextDigest: sha256Hex(plaintext), contentType, firstReply };
}

/** ECDH-ES with A256GCM on a P-256 ephemeral key (two 32-byte coordinates), no compression, no critical extensions. */
function assertSuite(jwe: CompactJwe): void {
  const { alg, enc, epk, zip, crit } = jwe.header;
  const ephemeral = epk as Partial<EcPublicJwk> | undefined;
  const inSuite =
    alg === JWE_SUITE.alg &&
    enc === JWE_SUITE.enc &&
    zip === undefined &&
    crit === undefined &&
    jwe.encryptedKey === '' &&
    typeof ephemeral === 'object' &&
    ephemeral !== null &&
    ephemeral.kty === JWE_SUITE.kty &&
    ephemeral.crv === JWE_SUITE.crv &&
    isCoordinate(ephemeral.x) &&
    isCoordinate(ephemeral.y);
  if (!inSuite) {
    throw new ApiError(
      'unsupported_jwe_suite',
      `Encrypt with alg ${JWE_SUITE.alg}, enc ${JWE_SUITE.enc} and a P-256 ephemeral key (epk with base64url x and y of 32 bytes), without zip or crit.`,
    );
  }
}

function isCoordinate(value: unknown): value is string {
  return typeof value === 'string' && COORDINATE.test(value);
}

/** The agent's public reply key from the protected header; refused with private parts, or unless a P-256 point. */
function readReplyKey(value: unknown): Buffer {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new ApiError(
      'invalid_reply_jwk',
      `Put the public P-256 JWK to encrypt the reply to in the protected header’s "${REPLY_JWK_PARAM}".`,
    );
  }
  const jwk = value as Record<string, unknown>;
  if (hasPrivateMember(jwk)) {
    throw new ApiError(
      'private_reply_jwk',
      'The reply JWK carries private key material: send only kty, crv, x and y, and make a new key pair.',
    );
  }
  const { kty, crv, x, y } = jwk;
  if (kty !== 'EC' || crv !== 'P-256' || !isCoordinate(x) || !isCoordinate(y)) {
    throw new ApiError('invalid_reply_jwk', 'The reply JWK must be a public P-256 key: kty "EC", crv "P-256", and base64url x and y.');
  }
  try {
    return publicPoint({ x, y });
  } catch {
    throw new ApiError('invalid_reply_jwk', 'The reply JWK is not a point on P-256.');
  }
}

/**
 * `cty` as a media type (RFC 7515 §4.1.10: a type without a slash means `application/<type>`);
 * `application/octet-stream` when the header has none.
 */
function contentTypeOf(cty: unknown): string {
  if (cty === undefined) return 'application/octet-stream';
  const type = typeof cty === 'string' && !cty.includes('/') ? `application/${cty}` : cty;
  if (typeof type !== 'string' || type.length > 256 || !MEDIA_TYPE.test(type)) {
    throw new ApiError('invalid_compact_jwe', 'The protected header’s cty is not a media type.');
  }
  return type;
}
