import type { PaySeller } from '../../shared/contract.js';
import { type Jwks, publicEncryptionJwk } from '../../shared/encryption/suite.js';

/**
 * The seller's public encryption keys as a JWKS, served without credentials at the pay URL's
 * `/.well-known/jwks.json` (an anonymous agent paying per call encrypts too). A retired key
 * leaves it at once; caches may keep it a minute, and a request to it meets `unknown_jwe_kid`.
 */
export function sellerJwks(seller: PaySeller): Jwks {
  return {
    keys: seller.encryptionKeys.map(({ kid, x, y }) => publicEncryptionJwk(kid, x, y)),
  };
}

export const JWKS_CACHE_CONTROL = 'public, max-age=60';
