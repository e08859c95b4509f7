import type { LocalChain } from '../../chain/local-chain.js';
import type { Facilitator } from '../../control-plane/facilitator/facilitator.js';
import { LocalFacilitator, type LocalFacilitatorConfig } from '../../control-plane/facilitator/local-facilitator.js';
import type { SettleResult } from '../../control-plane/facilitator/results.js';
import type { PaymentPayload, PaymentRequirements } from '../../shared/payments/x402-wire.js';

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

/**
 * A facilitator wrapper (`startPaidWorld`'s `wrapFacilitator`) that verifies and describes itself
 * as the real one and settles as `settle` says; `settle` may pass to the real one.
 */
export function settlingWith(
  settle: (payload: PaymentPayload, requirements: PaymentRequirements, real: Facilitator) => Promise<SettleResult>,
): (real: Facilitator) => Facilitator {
  return (real) => ({
    verify: (p, r) => real.verify(p, r),
    supported: () => real.supported(),
    settle: (p, r) => settle(p, r, real),
  });
}
