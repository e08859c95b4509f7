import { randomBytes } from 'node:crypto';
import { type Address, type Hex, toHex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import type { HubConfig } from '../../shared/config.js';
import { evmChainIdOf } from '../../shared/payments/evm-network.js';
import { encodeHeaderJson, X402_HEADERS } from '../../shared/payments/x402-headers.js';
import { type PaymentRequirements, paymentRequirementsSchema } from '../../shared/payments/x402-wire.js';
import { transferWithAuthorizationTypes } from '../facilitator/transfer-authorization.js';
import { paymentRequiredOf, requestPayUrl } from '../pay-url/pay-url-request.js';
import type { TestAgent } from './test-agents.js';

export type AgentExchange = {
  status: number;
  headers: Record<string, string>;
  body: string;
  /** The payment the agent signed for the answer's 402, when it paid one. */
  paid: { paymentId: string | null; network: string; amount: string; payTo: string } | null;
};

/**
 * Sends a request to a sandbox seller's pay URL as a test agent would: with its bearer token, and
 * on a 402 that names an x402 payment, once more with the payment signed by its wallet (exact
 * scheme, EIP-3009), as the official x402 clients do (pay-url/pay-url-request.ts).
 */
export async function payAsAgent(
  config: HubConfig,
  agent: TestAgent,
  call: { method: string; path: string; body?: string | undefined },
): Promise<AgentExchange> {
  const first = await send(config, agent, call);
  const requirements = first.status === 402 ? offeredPayment(paymentRequiredOf(first)) : undefined;
  if (!requirements) return { ...first, paid: null };
  const signed = await signPayment(agent.privateKey, requirements);
  const paid = await send(config, agent, call, { [X402_HEADERS.signature]: encodeHeaderJson(signed) });
  // hub names the payment in its challenge (docs/decisions.md#D-160): the id the sandbox payment routes take.
  const paymentId = (requirements.extra as { paymentId?: unknown } | undefined)?.paymentId;
  return {
    ...paid,
    paid: {
      paymentId: typeof paymentId === 'string' ? paymentId : null,
      network: requirements.network,
      amount: requirements.amount,
      payTo: requirements.payTo,
    },
  };
}

function send(config: HubConfig, agent: TestAgent, call: { method: string; path: string; body?: string | undefined }, extra = {}) {
  return requestPayUrl(config, agent.slug, { ...call, headers: { authorization: `Bearer ${agent.token}`, ...extra } });
}

/** The first exact-EVM requirement of an x402 challenge; undefined for none. */
function offeredPayment(challenge: unknown): PaymentRequirements | undefined {
  const accepts = (challenge as { accepts?: unknown } | null)?.accepts;
  const offers = (Array.isArray(accepts) ? accepts : []).map((a) => paymentRequirementsSchema.safeParse(a));
  return offers.find((o) => o.success && o.data.scheme === 'exact' && o.data.network.startsWith('eip155:'))?.data;
}

async function signPayment(privateKey: Hex, requirements: PaymentRequirements) {
  const payer = privateKeyToAccount(privateKey);
  const extra = requirements.extra as { name?: string; version?: string } | undefined;
  const message = {
    from: payer.address,
    to: requirements.payTo as Address,
    value: BigInt(requirements.amount),
    validAfter: 0n,
    validBefore: BigInt(Math.floor(Date.now() / 1000) + requirements.maxTimeoutSeconds),
    nonce: toHex(randomBytes(32)),
  };
  const signature = await payer.signTypedData({
    domain: {
      name: extra?.name ?? '',
      version: extra?.version ?? '',
      chainId: evmChainIdOf(requirements.network),
      verifyingContract: requirements.asset as Address,
    },
    types: transferWithAuthorizationTypes,
    primaryType: 'TransferWithAuthorization',
    message,
  });
  const authorization = { ...message, value: message.value.toString(), validAfter: '0', validBefore: message.validBefore.toString() };
  return { x402Version: 2, accepted: requirements, payload: { signature, authorization } };
}
