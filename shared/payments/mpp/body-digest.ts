import { createHash } from 'node:crypto';
import { safeEqual } from '../../tokens.js';

/**
 * The `digest` challenge parameter: SHA-256 of the challenged request's body as an RFC 9530
 * `Content-Digest` member (`sha-256=:<base64>:`). It sits inside the challenge id's HMAC, so a paid
 * retry can be checked against the body it was priced for without looking anything up.
 */

export function bodyDigest(body: string | Uint8Array): string {
  return sha256Digest(createHash('sha256').update(body).digest());
}

/** The `digest` parameter of a body whose SHA-256 is `sha256` (32 bytes). */
export function sha256Digest(sha256: Uint8Array): string {
  return `sha-256=:${Buffer.from(sha256).toString('base64')}:`;
}

/** Whether `body` is the body `digest` was computed over; false for a missing or foreign digest. */
export function digestMatches(digest: string | undefined, body: string | Uint8Array): boolean {
  return digest !== undefined && safeEqual(digest, bodyDigest(body));
}
