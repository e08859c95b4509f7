import { randomBytes } from 'node:crypto';
import { request } from 'undici';
import { type Address, type Hex, toHex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { readUpTo } from '../../runtime/read-body.js';
import type { HubConfig } from '../../shared/config.js';
import { ApiError } from '../../shared/errors.js';
import { HUB_HEADERS } from '../../shared/hub-headers.js';
import { payHostOf } from '../../shared/pay-host.js';
import { type PaymentRequirements, paymentRequirementsSchema } from '../../shared/payments/x402-wire.js';
import { transferWithAuthorizationTypes } from '../facilitator/transfer-authorization.js';
import type { TestAgent } from './test-agents.js';

/** What a sandbox drive shows of the pay URL's answer: enough to debug, never unbounded. */
const MAX_BODY_BYTES = 16_384;
const SHOWN_HEADERS = ['content-type', 'hub-billing', 'hub-usage-adjusted', 'payment-response', 'payment-required', 'location'];

export type AgentExchange = {
  status: number;
  headers: Record<string, string>;
  body: string;
  /** The payment the agent signed for the answer's 402, when it paid one. */
  paid: { network: string; amount: string; payTo: string } | null;
};

/**
 * Sends a request to a sandbox seller's pay URL as a test agent would: with its bearer token, and
 * on a 402 that names an x402 payment, once more with the payment signed by its wallet (exact
 * scheme, EIP-3009), as the official x402 clients do. The request goes to this hub's own proxy
 * on loopback, with the pay host as Host: the control-plane runs beside it (D-001).
 */
export async function payAsAgent(
  config: HubConfig,
  agent: TestAgent,
  call: { method: string; path: string; body?: string | undefined },
): Promise<AgentExchange> {
  const first = await send(config, agent, call);
  const requirements = first.status === 402 ? offeredPayment(first.headers['payment-required']) : undefined;
  if (!requirements) return { ...first, paid: null };
  const signed = await signPayment(agent.privateKey, requirements);
  const paid = await send(config, agent, call, { 'payment-signature': Buffer.from(JSON.stringify(signed)).toString('base64') });
  return { ...paid, paid: { network: requirements.network, amount: requirements.amount, payTo: requirements.payTo } };
}

async function send(config: HubConfig, agent: TestAgent, call: { method: string; path: string; body?: string | undefined }, extra = {}) {
  try {
    return await exchange(config, agent, call, extra);
  } catch (err) {
    throw driveFailure(err);
  }
}

async function exchange(
  config: HubConfig,
  agent: TestAgent,
  call: { method: string; path: string; body?: string | undefined },
  extra = {},
) {
  const res = await request(`http://127.0.0.1:${config.proxy.port}${call.path}`, {
    method: call.method as 'GET',
    headers: {
      host: payHostOf(agent.slug, config.payDomain),
      authorization: `Bearer ${agent.token}`,
      ...(call.body === undefined ? {} : { 'content-type': 'application/json' }),
      ...extra,
    },
    body: call.body ?? null,
    headersTimeout: config.proxy.headersTimeoutMs,
    bodyTimeout: config.proxy.bodyTimeoutMs,
  });
  // Read no further than is shown: the seller's answer may be of any size.
  const body = (await readUpTo(res.body, MAX_BODY_BYTES)).bytes.toString('utf8');
  const headers: Record<string, string> = {};
  for (const name of [...SHOWN_HEADERS, HUB_HEADERS.requestId]) {
    const value = res.headers[name];
    if (typeof value === 'string') headers[name] = value;
  }
  return { status: res.statusCode, headers, body };
}

/**
 * A drive the pay URL did not answer in full (refused, too slow, headers too big, cut off) is the
 * spec's envelope for a gateway's failure, never a 500: the seller sees what went wrong.
 */
function driveFailure(err: unknown): ApiError {
  const e = err as { name?: string; code?: string; message?: string };
  if (e.code === 'UND_ERR_HEADERS_TIMEOUT' || e.code === 'UND_ERR_BODY_TIMEOUT' || e.name === 'TimeoutError')
    return new ApiError('upstream_timeout', 'The pay URL did not answer in time.');
  return new ApiError('upstream_error', `The pay URL's answer could not be read (${e.code ?? e.message ?? 'network error'}).`);
}

/** The first exact-EVM requirement of a `payment-required` header; undefined for none. */
function offeredPayment(header: string | undefined): PaymentRequirements | undefined {
  if (!header) return undefined;
  try {
    const document = JSON.parse(Buffer.from(header, 'base64').toString('utf8')) as { accepts?: unknown[] };
    const offers = (document.accepts ?? []).map((a) => paymentRequirementsSchema.safeParse(a));
    return offers.find((o) => o.success && o.data.scheme === 'exact' && o.data.network.startsWith('eip155:'))?.data;
  } catch {
    return undefined;
  }
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
      chainId: Number(requirements.network.split(':')[1]),
      verifyingContract: requirements.asset as Address,
    },
    types: transferWithAuthorizationTypes,
    primaryType: 'TransferWithAuthorization',
    message,
  });
  const authorization = { ...message, value: message.value.toString(), validAfter: '0', validBefore: message.validBefore.toString() };
  return { x402Version: 2, accepted: requirements, payload: { signature, authorization } };
}
