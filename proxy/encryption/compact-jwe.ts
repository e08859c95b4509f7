import { createCipheriv, createDecipheriv, createECDH, createHash, type ECDH, randomBytes } from 'node:crypto';
import { JWE_SUITE } from '../../shared/encryption/suite.js';

/**
 * Compact JWE (RFC 7516) for hub's one suite, ECDH-ES + A256GCM on P-256 (RFC 7518 §4.6, §5.3),
 * on Node's native crypto: a message costs one ECDH, one SHA-256 and one AES-GCM pass. Keys are
 * raw points on `ECDH` objects, not KeyObjects (importing a JWK as a KeyObject costs more than the
 * agreement it serves). JOSE libraries run the same steps through WebCrypto at two to three times
 * the CPU, which matters on the proxy's hot path; test/proxy/encryption checks every message against the `jose` library
 * both ways. The functions take and return plain data, so they run as well on a worker thread.
 */

export type EcPublicJwk = { kty: 'EC'; crv: 'P-256'; x: string; y: string };
export type EcPrivateJwk = EcPublicJwk & { d: string };

/** A Compact JWE split into its five parts; the header decoded, the rest still base64url. */
export type CompactJwe = {
  protectedHeader: string;
  header: Record<string, unknown>;
  encryptedKey: string;
  iv: string;
  ciphertext: string;
  tag: string;
};

const BASE64URL = /^[A-Za-z0-9_-]*$/;

/** The five parts, or undefined when the text is not a Compact JWE with a JSON-object header. */
export function parseCompactJwe(text: string): CompactJwe | undefined {
  const parts = text.trim().split('.');
  if (parts.length !== 5) return undefined;
  const [protectedHeader, encryptedKey, iv, ciphertext, tag] = parts as [string, string, string, string, string];
  if (!protectedHeader || !iv || !tag || !parts.every((part) => BASE64URL.test(part))) return undefined;
  let header: unknown;
  try {
    header = JSON.parse(Buffer.from(protectedHeader, 'base64url').toString('utf8'));
  } catch {
    return undefined; // not JSON, or nested deeper than the parser's stack
  }
  if (typeof header !== 'object' || header === null || Array.isArray(header)) return undefined;
  return { protectedHeader, header: header as Record<string, unknown>, encryptedKey, iv, ciphertext, tag };
}

/**
 * A P-256 public key from its JWK as an uncompressed point (0x04 ‖ x ‖ y); throws unless x and y
 * are 32 bytes each and the point is on the curve (an off-curve point would leak the private key
 * it is combined with).
 */
export function publicPoint(jwk: { x: string; y: string }): Buffer {
  const point = uncheckedPoint(jwk);
  if (!onP256(point)) throw new Error('the point is not on P-256');
  return point;
}

// P-256's field prime and curve coefficient b (SEC 2 §2.4.2; a is -3).
const P256_P = 0xffffffff00000001000000000000000000000000ffffffffffffffffffffffffn;
const P256_B = 0x5ac635d8aa3a93e7b3ebbd55769886bc651d06b0cc53b0f63bce3c3e27d2604bn;

/**
 * y² = x³ - 3x + b over the field, with both coordinates reduced. Worked out here rather than by
 * decoding the point natively, which costs five times as much; the agreement checks it again.
 */
export function onP256(point: Uint8Array): boolean {
  if (point.length !== 65 || point[0] !== 4) return false;
  const x = BigInt(`0x${Buffer.from(point.subarray(1, 33)).toString('hex')}`);
  const y = BigInt(`0x${Buffer.from(point.subarray(33)).toString('hex')}`);
  if (x >= P256_P || y >= P256_P) return false;
  return (y * y - (x * x * x - 3n * x + P256_B)) % P256_P === 0n;
}

/** The point of a JWK with the right lengths, not yet checked on the curve (`computeSecret` checks). */
function uncheckedPoint(jwk: { x: string; y: string }): Buffer {
  const x = Buffer.from(jwk.x, 'base64url');
  const y = Buffer.from(jwk.y, 'base64url');
  if (x.length !== 32 || y.length !== 32) throw new Error('a P-256 coordinate is 32 bytes');
  return Buffer.concat([UNCOMPRESSED, x, y]);
}

/** The seller's side of the key agreement, from its private JWK (import once, agree many times). */
export function recipientOf(jwk: EcPrivateJwk): ECDH {
  const ecdh = createECDH('prime256v1');
  ecdh.setPrivateKey(Buffer.from(jwk.d, 'base64url'));
  return ecdh;
}

const UNCOMPRESSED = Buffer.from([4]);

function uint32(n: number): Buffer {
  const out = Buffer.alloc(4);
  out.writeUInt32BE(n);
  return out;
}

function lengthPrefixed(data: Buffer): Buffer {
  return Buffer.concat([uint32(data.length), data]);
}

/**
 * The content key from the shared secret: Concat KDF (NIST SP 800-56A) as RFC 7518 §4.6.2 sets it
 * for direct ECDH-ES, where the algorithm id is the `enc` value. 256 bits is one SHA-256 round.
 */
function contentKey(sharedSecret: Buffer, apu: Buffer, apv: Buffer): Buffer {
  return createHash('sha256')
    .update(uint32(1))
    .update(sharedSecret)
    .update(lengthPrefixed(Buffer.from(JWE_SUITE.enc)))
    .update(lengthPrefixed(apu))
    .update(lengthPrefixed(apv))
    .update(uint32(256))
    .digest();
}

const EMPTY = Buffer.alloc(0);

function optionalBytes(value: unknown): Buffer {
  return typeof value === 'string' ? Buffer.from(value, 'base64url') : EMPTY;
}

/**
 * The parts of `jwe` its decryption reads, and nothing else: the header's ephemeral point and
 * party infos (the suite checked already). What goes to a worker thread is copied there, and an
 * agent's header may hold any JSON, nested deeper than a copy can go.
 */
export function decryptionParts(jwe: CompactJwe): CompactJwe {
  const { epk, apu, apv } = jwe.header as { epk: EcPublicJwk; apu?: unknown; apv?: unknown };
  const header: Record<string, unknown> = { epk: { x: epk.x, y: epk.y } };
  if (typeof apu === 'string') header.apu = apu;
  if (typeof apv === 'string') header.apv = apv;
  return { ...jwe, header };
}

/**
 * The plaintext of a JWE encrypted to `privateKey`; throws when it does not decrypt (tampered, or
 * encrypted to another key). The header's suite is the caller's to have checked.
 */
export function decryptCompactJwe(jwe: CompactJwe, recipient: ECDH): Buffer {
  // The agreement refuses a point off the curve itself: no separate check first.
  const sharedSecret = recipient.computeSecret(uncheckedPoint(jwe.header.epk as EcPublicJwk));
  const key = contentKey(sharedSecret, optionalBytes(jwe.header.apu), optionalBytes(jwe.header.apv));
  const iv = Buffer.from(jwe.iv, 'base64url');
  const tag = Buffer.from(jwe.tag, 'base64url');
  if (iv.length !== 12 || tag.length !== 16) throw new Error('A256GCM takes a 96-bit iv and a 128-bit tag');
  const decipher = createDecipheriv('aes-256-gcm', key, iv, { authTagLength: 16 });
  decipher.setAAD(Buffer.from(jwe.protectedHeader, 'ascii'));
  decipher.setAuthTag(tag);
  return Buffer.concat([decipher.update(Buffer.from(jwe.ciphertext, 'base64url')), decipher.final()]);
}

/**
 * The sender's half of one ECDH-ES key agreement with `recipient`: a fresh ephemeral key (RFC 7518
 * §4.6: one per message), its public coordinates for the header, and the content key it yields.
 * It does not depend on the plaintext, so it can be worked out before the plaintext exists.
 */
export type Agreement = { x: string; y: string; key: Uint8Array };

export function agreeWith(recipient: Uint8Array): Agreement {
  const ephemeral = createECDH('prime256v1');
  const point = ephemeral.generateKeys();
  return {
    x: point.subarray(1, 33).toString('base64url'),
    y: point.subarray(33).toString('base64url'),
    key: contentKey(ephemeral.computeSecret(recipient), EMPTY, EMPTY),
  };
}

/** `plaintext` as a Compact JWE under an agreement used for no other message; `header` adds protected parameters. */
export function encryptCompactJwe(plaintext: Uint8Array, { x, y, key }: Agreement, header: Record<string, unknown> = {}): string {
  const protectedHeader = Buffer.from(
    JSON.stringify({ ...header, alg: JWE_SUITE.alg, enc: JWE_SUITE.enc, epk: { kty: 'EC', crv: 'P-256', x, y } }),
  ).toString('base64url');
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, iv, { authTagLength: 16 });
  cipher.setAAD(Buffer.from(protectedHeader, 'ascii'));
  const ciphertext = Buffer.concat([cipher.update(plaintext), cipher.final()]);
  return `${protectedHeader}..${iv.toString('base64url')}.${ciphertext.toString('base64url')}.${cipher.getAuthTag().toString('base64url')}`;
}
