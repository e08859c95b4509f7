import type { LocalFacilitatorConfig } from '../../control-plane/facilitator/local-facilitator.js';
import { startTestChain } from './chain.js';
import { localFacilitatorFor } from './local-facilitator.js';
import { startRpcFaultProxy } from './rpc-fault-proxy.js';
import { requirementsFor, signPayment } from './sign-payment.js';

type Tap = Parameters<typeof startTestChain>[0];

/**
 * For settlement tests that need a chain to misbehave: a test chain behind an RPC fault proxy, a
 * payer and a payee, fresh $0.01 payments between them, and facilitators settling through either
 * URL (with `defaults`, then a test's own settings).
 */
export async function startSettlementChain(t: Tap, defaults: Partial<LocalFacilitatorConfig>) {
  const chain = await startTestChain(t);
  const proxy = await startRpcFaultProxy(t, chain.rpcUrl);
  const payerKey = chain.accounts[2]!.privateKey;
  const payee = chain.accounts[3]!.address;
  return {
    chain,
    proxy,
    payer: chain.accounts[2]!.address,
    payee,
    facilitatorVia: (rpcUrl: string, extra: Partial<LocalFacilitatorConfig> = {}) =>
      localFacilitatorFor(t, chain, { rpcUrl, ...defaults, ...extra }),
    /** A fresh $0.01 payment to `payTo` (the payee unless named). */
    newPayment: async (payTo: `0x${string}` = payee) => {
      const requirements = requirementsFor(chain, payTo);
      return { requirements, payment: await signPayment(chain, payerKey, requirements) };
    },
  };
}
