import { createRequire } from 'node:module';
import { bytesToHex, keccak256, type Address } from 'viem';
import type { Recoverer } from './recoverer.js';

type Secp256k1 = typeof import('secp256k1');

/** Throws when the native binding does not load on this platform. */
export function nativeRecoverer(): Recoverer {
  // `secp256k1`'s main entry silently falls back to a pure-JS implementation when the binding does
  // not load; its `bindings.js` entry is the binding or an exception, so a fallback stays visible.
  const binding = createRequire(import.meta.url)('secp256k1/bindings.js') as Secp256k1;
  return {
    name: 'native-secp256k1',
    async recoverAddress(digest, signature) {
      const publicKey = binding.ecdsaRecover(signature.compact, signature.recoveryId, digest, false);
      // Uncompressed key is 0x04 ‖ X ‖ Y; the address is the last 20 bytes of keccak(X ‖ Y).
      return bytesToHex(keccak256(publicKey.subarray(1), 'bytes').subarray(12)) as Address;
    },
  };
}
