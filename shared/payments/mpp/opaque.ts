import { isId } from '../../ids.js';
import type { Challenge } from './challenge.js';
import { base64urlEncode, canonicalJson, decodeBase64urlJson, isPlainObject } from './encoding.js';

/**
 * Where hub's payment attempt id (`apay_…`) travels: the challenge's `opaque` parameter, which the
 * MPP spec reserves for server correlation data and which clients must echo untouched. It holds
 * base64url of canonical JSON `{"paymentId":"apay_…"}`, the shape mppx gives its `meta` option, so
 * an mppx server reading hub's challenges sees the same thing. The challenge id's HMAC covers
 * `opaque`, so an echoed payment id is one hub issued for exactly this challenge.
 */

const PAYMENT_ID_KEY = 'paymentId';

export function paymentIdOpaque(paymentId: string): string {
  if (!isId('paymentAttempt', paymentId)) throw new TypeError(`not a payment attempt id: ${paymentId}`);
  return base64urlEncode(canonicalJson({ [PAYMENT_ID_KEY]: paymentId })!);
}

/** The payment attempt id a challenge carries, or undefined when its opaque holds none. */
export function paymentIdOf(challenge: Pick<Challenge, 'opaque'>): string | undefined {
  if (challenge.opaque === undefined) return undefined;
  const meta = decodeBase64urlJson(challenge.opaque);
  if (!isPlainObject(meta)) return undefined;
  const paymentId = meta[PAYMENT_ID_KEY];
  return isId('paymentAttempt', paymentId) ? paymentId : undefined;
}
