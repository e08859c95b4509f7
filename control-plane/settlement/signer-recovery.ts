import type { Address } from 'viem';
import type { SignedAuthorization } from '../../shared/payments/eip3009.js';
import { transferAuthorizationDigest } from './authorization-digest.js';
import { defaultRecoverer, type Recoverer } from './recoverer.js';
import { parseRecoverableSignature } from './signature.js';

/**
 * Who signed an EIP-3009 transfer authorization. The facilitator asks a `SignerRecovery`, which
 * either recovers on the calling thread (`inlineSignerRecovery`) or in a worker pool
 * (`recover-pool.ts`); the input is plain data (bigints included), so it crosses to a worker as is.
 */

export type { SignedAuthorization };

export interface SignerRecovery {
  readonly name: string;
  /** The signer's lowercase address, or undefined when the signature is malformed or recovers nothing. */
  recoverSigner(input: SignedAuthorization): Promise<Address | undefined>;
  close(): Promise<void>;
}

export async function recoverAuthorizationSigner(input: SignedAuthorization, recoverer: Recoverer): Promise<Address | undefined> {
  const signature = parseRecoverableSignature(input.signature);
  if (!signature) return undefined;
  const digest = transferAuthorizationDigest(input.domain, input.authorization);
  try {
    return await recoverer.recoverAddress(digest, signature);
  } catch {
    return undefined;
  }
}

export async function inlineSignerRecovery(recoverer?: Recoverer): Promise<SignerRecovery> {
  const backend = recoverer ?? (await defaultRecoverer());
  return {
    name: `inline:${backend.name}`,
    recoverSigner: (input) => recoverAuthorizationSigner(input, backend),
    close: async () => {},
  };
}
