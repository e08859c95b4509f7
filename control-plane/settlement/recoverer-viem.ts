import { recoverAddress } from 'viem';
import type { Recoverer } from './recoverer.js';

/** viem's pure-JS recovery (noble-curves): works everywhere, ~2 ms per signature. */
export const viemRecoverer: Recoverer = {
  name: 'viem',
  async recoverAddress(digest, signature) {
    const address = await recoverAddress({ hash: digest, signature: { r: signature.r, s: signature.s, yParity: signature.recoveryId } });
    return address.toLowerCase() as typeof address;
  },
};
