import type { LocalChain } from '../../chain/local-chain.js';
import { LocalFacilitator, type LocalFacilitatorConfig } from '../../control-plane/facilitator/local-facilitator.js';

type Tap = { teardown: (fn: () => unknown) => void };

/** A LocalFacilitator for a test chain, settling its token with its settler key; closed at teardown. */
export function localFacilitatorFor(t: Tap, chain: LocalChain, overrides: Partial<LocalFacilitatorConfig> = {}): LocalFacilitator {
  const facilitator = new LocalFacilitator({
    rpcUrl: chain.rpcUrl,
    chainId: chain.chainId,
    tokens: [chain.token],
    settlerPrivateKey: chain.settler.privateKey,
    // anvil mines each transaction as it arrives: poll receipts often instead of viem's default of
    // seconds, and send in nonce order.
    pollingIntervalMs: 50,
    sendInOrder: true,
    ...overrides,
  });
  t.teardown(() => facilitator.close());
  return facilitator;
}
