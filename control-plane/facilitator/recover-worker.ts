import { workerData } from 'piscina';
import type { Address } from 'viem';
import { loadRecoverer, type RecovererChoice, recoverAuthorizationSigner, type SignedAuthorization } from './signer-recovery.js';

const recoverer = loadRecoverer((workerData as { backend?: RecovererChoice } | undefined)?.backend ?? 'default');

/** Piscina task: recover one authorization's signer on a worker thread. */
export default async function recoverSigner(input: SignedAuthorization): Promise<Address | undefined> {
  return recoverAuthorizationSigner(input, await recoverer);
}
