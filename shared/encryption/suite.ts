/**
 * The one suite hub's end-to-end encrypted requests use, both ways: ECDH-ES key agreement on
 * P-256 (a fresh ephemeral key per message, so no key is ever wrapped) and AES-256-GCM for the
 * content. One suite means no negotiation and nothing to downgrade to.
 */
export const JWE_SUITE = { alg: 'ECDH-ES', enc: 'A256GCM', kty: 'EC', crv: 'P-256' } as const;

/** The media type of an encrypted body: a Compact JWE. */
export const JOSE_MEDIA_TYPE = 'application/jose';

/** Where the pay URL publishes the seller's public keys. */
export const JWKS_PATH = '/.well-known/jwks.json';

/**
 * The protected-header parameter that carries the agent's reply key (a public P-256 JWK): the
 * seller's response is encrypted to it. Being in the protected header, it is bound to the
 * ciphertext by the authentication tag: nobody on the way can swap it for their own.
 */
export const REPLY_JWK_PARAM = 'reply_jwk';

/**
 * The private members of any JWK type (RFC 7518 §6): a reply key with one was sent by mistake,
 * and the protected header it travels in is encoded, not encrypted.
 */
const PRIVATE_JWK_MEMBERS = ['d', 'p', 'q', 'dp', 'dq', 'qi', 'oth', 'k', 'priv'] as const;

export function hasPrivateMember(jwk: object): boolean {
  return PRIVATE_JWK_MEMBERS.some((member) => member in jwk);
}

/** A public key as the JWKS publishes it. */
export type PublicEncryptionJwk = {
  kty: 'EC';
  crv: 'P-256';
  x: string;
  y: string;
  kid: string;
  use: 'enc';
  alg: 'ECDH-ES';
};

export type Jwks = { keys: PublicEncryptionJwk[] };

/** The published form of a key of the suite: its id and the coordinates of its public point. */
export function publicEncryptionJwk(kid: string, x: string, y: string): PublicEncryptionJwk {
  return { kty: JWE_SUITE.kty, crv: JWE_SUITE.crv, x, y, kid, use: 'enc', alg: JWE_SUITE.alg };
}
