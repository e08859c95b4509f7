import { CompactEncrypt, type CryptoKey, compactDecrypt, exportJWK, generateKeyPair, importJWK, type JWK } from 'jose';
import { hasPrivateMember, JOSE_MEDIA_TYPE, JWE_SUITE, JWKS_PATH, type Jwks, REPLY_JWK_PARAM } from '../shared/encryption/suite.js';

/**
 * The agent's side of hub's end-to-end encrypted requests, on the `jose` library: fetch a seller's
 * JWKS, encrypt a request body to it with a reply key, and decrypt what comes back (one Compact JWE,
 * or an event stream of them). The suite is hub's one: ECDH-ES + A256GCM on P-256.
 *
 *   const replyKey = await createReplyKey();
 *   const body = await encryptRequest(await fetchJwks(payUrl), JSON.stringify(query), { replyKey, contentType: 'application/json' });
 *   const res = await fetch(`${payUrl}/search`, { method: 'POST', headers: { 'content-type': 'application/jose' }, body });
 *   const { plaintext } = await decryptReply(await res.text(), replyKey);
 */

export { JOSE_MEDIA_TYPE, JWKS_PATH, type Jwks };

/** A key pair the reply is encrypted to: the public JWK travels in the request, the private key never leaves the agent. */
export type ReplyKey = { publicJwk: JWK; privateKey: CryptoKey };

export async function createReplyKey(): Promise<ReplyKey> {
  const { publicKey, privateKey } = await generateKeyPair(JWE_SUITE.alg, { crv: JWE_SUITE.crv, extractable: true });
  const { kty, crv, x, y } = await exportJWK(publicKey);
  return { publicJwk: { kty, crv, x, y }, privateKey };
}

/** The seller's public keys from its pay URL (`https://weather.pay.example.com`). */
export async function fetchJwks(payUrl: string, fetchImpl: typeof fetch = fetch): Promise<Jwks> {
  const res = await fetchImpl(new URL(JWKS_PATH, payUrl));
  if (!res.ok) throw new Error(`the JWKS at ${payUrl} answered ${res.status}`);
  return (await res.json()) as Jwks;
}

export type EncryptOptions = {
  replyKey: ReplyKey;
  /** The plaintext's media type, which the seller receives as its Content-Type. */
  contentType?: string;
  /** A key of the JWKS other than its first (the newest). */
  kid?: string;
};

/**
 * A request body encrypted to the seller: send it with `Content-Type: application/jose`. Throws
 * when the reply key's public JWK carries a private member: the header it would travel in is
 * readable by anyone on the way.
 */
export async function encryptRequest(jwks: Jwks, plaintext: string | Uint8Array, options: EncryptOptions): Promise<string> {
  if (hasPrivateMember(options.replyKey.publicJwk)) {
    throw new Error('the reply key’s publicJwk carries private key material: send only kty, crv, x and y (createReplyKey makes one)');
  }
  const jwk = options.kid ? jwks.keys.find((key) => key.kid === options.kid) : jwks.keys[0];
  if (!jwk) throw new Error(options.kid ? `the JWKS has no key ${options.kid}` : 'the seller publishes no encryption key');
  const recipient = await importJWK({ kty: jwk.kty, crv: jwk.crv, x: jwk.x, y: jwk.y }, JWE_SUITE.alg);
  const bytes = typeof plaintext === 'string' ? new TextEncoder().encode(plaintext) : plaintext;
  return new CompactEncrypt(bytes)
    .setProtectedHeader({
      alg: JWE_SUITE.alg,
      enc: JWE_SUITE.enc,
      kid: jwk.kid,
      ...(options.contentType ? { cty: options.contentType } : {}),
      [REPLY_JWK_PARAM]: options.replyKey.publicJwk,
    })
    .encrypt(recipient);
}

export type Reply = { plaintext: Uint8Array; contentType: string | undefined };

const decryptOptions = { keyManagementAlgorithms: [JWE_SUITE.alg], contentEncryptionAlgorithms: [JWE_SUITE.enc] };

/** A response body (one Compact JWE) decrypted with the reply key; `contentType` is the seller's. */
export async function decryptReply(jwe: string, replyKey: ReplyKey): Promise<Reply> {
  const { plaintext, protectedHeader } = await compactDecrypt(jwe.trim(), replyKey.privateKey, decryptOptions);
  return { plaintext, contentType: protectedHeader.cty };
}

/**
 * An encrypted event stream, decrypted: yields each chunk the seller sent, in order. Throws when
 * an event is out of order or the stream ends before hub's closing `end` event (it was cut off).
 */
export async function* decryptEventStream(body: AsyncIterable<Uint8Array>, replyKey: ReplyKey): AsyncGenerator<Uint8Array> {
  const decoder = new TextDecoder();
  let buffered = '';
  let expected = 0;
  for await (const chunk of body) {
    buffered += decoder.decode(chunk, { stream: true });
    let boundary = buffered.indexOf('\n\n');
    while (boundary >= 0) {
      const event = buffered.slice(0, boundary);
      buffered = buffered.slice(boundary + 2);
      boundary = buffered.indexOf('\n\n');
      const data = event
        .split('\n')
        .filter((line) => line.startsWith('data: '))
        .map((line) => line.slice(6))
        .join('');
      if (!data) continue;
      const { plaintext, protectedHeader } = await compactDecrypt(data, replyKey.privateKey, decryptOptions);
      if (protectedHeader.seq !== expected)
        throw new Error(`encrypted event ${String(protectedHeader.seq)} arrived where ${expected} was due`);
      expected++;
      if (protectedHeader.end === true) return;
      yield plaintext;
    }
  }
  throw new Error('the encrypted event stream ended before its end event: it was cut off');
}
