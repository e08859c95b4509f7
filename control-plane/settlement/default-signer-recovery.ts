import { createRecoverPool } from './recover-pool.js';
import { defaultRecoverer } from './recoverer.js';
import { inlineSignerRecovery, type SignerRecovery } from './signer-recovery.js';

/**
 * Inline recovery with the native binding; a worker pool only when the binding did not load and
 * each recovery would block the event loop for milliseconds (bench/recover.ts measures both).
 */
export async function defaultSignerRecovery(): Promise<SignerRecovery> {
  const recoverer = await defaultRecoverer();
  return recoverer.name === 'native-secp256k1' ? inlineSignerRecovery(recoverer) : createRecoverPool();
}
