import type { Address } from 'viem';
import { nativeRecoverer } from './recoverer-native.js';
import { viemRecoverer } from './recoverer-viem.js';
import type { RecoverableSignature } from './signature.js';

/**
 * Public-key recovery (`ecrecover`): which address signed a 32-byte digest. Two backends, measured
 * by bench/recover.ts: the native libsecp256k1 binding and viem's pure JS.
 */
export interface Recoverer {
  readonly name: 'native-secp256k1' | 'viem';
  /** The signer's address, lowercase; throws if no public key recovers. */
  recoverAddress(digest: Uint8Array, signature: RecoverableSignature): Promise<Address>;
}

/** `default`: native when its binding loads on this platform, else viem. `native` throws when it does not load. */
export type RecovererChoice = 'default' | 'native' | 'viem';

let fallback: Recoverer | undefined;

export async function loadRecoverer(choice: RecovererChoice = 'default'): Promise<Recoverer> {
  if (choice === 'native') return nativeRecoverer();
  if (choice === 'viem') return viemRecoverer;
  if (!fallback) {
    try {
      fallback = nativeRecoverer();
    } catch {
      fallback = viemRecoverer;
    }
  }
  return fallback;
}

/** The default backend, chosen once per thread. */
export function defaultRecoverer(): Promise<Recoverer> {
  return loadRecoverer('default');
}
