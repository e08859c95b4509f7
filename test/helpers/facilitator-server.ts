import type { IncomingMessage } from 'node:http';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { x402Facilitator } from '@x402/core/facilitator';
import { type FacilitatorEvmSigner, toFacilitatorEvmSigner } from '@x402/evm';
import { BatchSettlementEvmScheme as BatchSettlementFacilitatorScheme } from '@x402/evm/batch-settlement/facilitator';
import { ExactEvmScheme as ExactEvmFacilitatorScheme } from '@x402/evm/exact/facilitator';
import { createPublicClient, createWalletClient, type Hex, http, parseTransaction, publicActions, type Transport } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { createNonceManager, jsonRpc } from 'viem/nonce';
import type { ChainDeployment } from '../../chain/deployment.js';
import type { DevAccount } from '../../chain/dev-accounts.js';
import { evmChain } from '../../chain/evm-chain.js';
import { serveOnLoopback } from './loopback-server.js';

/**
 * A facilitator-shaped HTTP server on loopback: `POST /verify`, `POST /settle`, `GET /supported`,
 * answered by whatever `handle` returns, so a test can put a real facilitator behind it or script
 * faults (status, raw body, delay, no answer at all).
 */

export type Route = 'verify' | 'settle' | 'supported';
export type Answer = { status: number; body: unknown; raw?: boolean; delayMs?: number } | 'hang';
export type Handler = (route: Route, body: unknown, headers: IncomingMessage['headers']) => Answer | Promise<Answer>;

type Tap = { teardown: (fn: () => unknown) => void };

export function startFacilitatorServer(t: Tap, handle: Handler): Promise<string> {
  return serveOnLoopback(t, async (req, res, text) => {
    const route = (req.url ?? '').replace(/^\//, '') as Route;
    const answer = await handle(route, text ? JSON.parse(text) : undefined, req.headers);
    if (answer === 'hang') return;
    if (answer.delayMs) await new Promise((resolve) => setTimeout(resolve, answer.delayMs));
    if (res.destroyed) return;
    const body = answer.raw
      ? String(answer.body)
      : JSON.stringify(answer.body, (_k, v: unknown) => (typeof v === 'bigint' ? v.toString() : v));
    res.writeHead(answer.status, { 'content-type': 'application/json' }).end(body);
  });
}

/**
 * JSON-RPC over HTTP whose raw transactions reach the node in nonce order, as hub's settler sends
 * them on a local chain: anvil's automine can leave a transaction that overtook its predecessor
 * unmined until another arrives. Only the send waits (for the send of the nonce before it, at most
 * `holdMs`, in case that nonce never comes); preparing and signing run side by side.
 */
function sentInNonceOrder(rpcUrl: string, holdMs = 250): Transport {
  let next: number | undefined;
  const held = new Map<number, () => void>();
  const sent = (nonce: number) => {
    next = Math.max(next ?? 0, nonce + 1);
    held.get(next)?.();
  };
  return (options) => {
    const transport = http(rpcUrl)(options);
    const request = (async (args: { method: string; params?: unknown }) => {
      if (args.method !== 'eth_sendRawTransaction') return transport.request(args as never);
      const nonce = parseTransaction((args.params as [Hex])[0]).nonce ?? 0;
      if (next !== undefined && nonce > next) {
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, holdMs);
          held.set(nonce, () => {
            clearTimeout(timer);
            resolve();
          });
        });
        held.delete(nonce);
      }
      try {
        return await transport.request(args as never);
      } finally {
        sent(nonce);
      }
    }) as typeof transport.request;
    return { ...transport, request };
  };
}

/**
 * The signer x402's facilitator settles with on the test chain, built as x402's examples build it:
 * a viem wallet client with public actions, the chain's settler (or `settlerAccount`) as its account.
 * One per account: it keeps the account's nonces.
 */
export function x402FacilitatorSigner(chain: ChainDeployment, settlerAccount: DevAccount = chain.settler): FacilitatorEvmSigner {
  const viemChain = evmChain(chain.chainId, chain.rpcUrl);
  // A nonce manager, as a facilitator settling several payments at once needs (x402 leaves that to the wallet).
  const settler = privateKeyToAccount(settlerAccount.privateKey, { nonceManager: createNonceManager({ source: jsonRpc() }) });
  // Receipts polled as often as hub's local rail polls them (viem's default, 4 s, would stall settlements).
  const wallet = createWalletClient({
    account: settler,
    chain: viemChain,
    transport: sentInNonceOrder(chain.rpcUrl),
    pollingInterval: 25,
  }).extend(publicActions);
  return toFacilitatorEvmSigner({ ...wallet, address: settler.address } as unknown as Parameters<typeof toFacilitatorEvmSigner>[0]);
}

/** x402's own exact-EVM facilitator settling on the test chain with `x402FacilitatorSigner`'s signer (or `signer`). */
export function x402ReferenceFacilitator(
  chain: ChainDeployment,
  settlerAccount: DevAccount = chain.settler,
  signer: FacilitatorEvmSigner = x402FacilitatorSigner(chain, settlerAccount),
): x402Facilitator {
  return new x402Facilitator().register(chain.network, new ExactEvmFacilitatorScheme(signer));
}

/** x402's own facilitator (`x402ReferenceFacilitator`) behind the standard HTTP API, at the URL returned; `asked` hears each route asked. */
export function startX402FacilitatorServer(t: Tap, chain: ChainDeployment, asked?: (route: Route) => void): Promise<string> {
  const official = x402ReferenceFacilitator(chain);
  return startFacilitatorServer(t, async (route, body) => {
    asked?.(route);
    if (route === 'supported') return { status: 200, body: official.getSupported() };
    const { paymentPayload, paymentRequirements } = body as { paymentPayload: never; paymentRequirements: never };
    if (route === 'verify') return { status: 200, body: await official.verify(paymentPayload, paymentRequirements) };
    return { status: 200, body: await official.settle(paymentPayload, paymentRequirements) };
  });
}

/** Where x402's facilitator reads a channel from (one Multicall3 `tryAggregate`), on every chain it knows. */
const MULTICALL3 = '0xcA11bde05977b3631167028862bE2a173976CA11';

/**
 * Puts Multicall3 at its usual address on the test chain (anvil has none), as every public chain
 * has it: x402's batch-settlement facilitator reads each channel through it. Its runtime code is
 * what running viem's creation code returns; nothing is mined.
 */
export async function placeMulticall3(chain: ChainDeployment): Promise<void> {
  const client = createPublicClient({ chain: evmChain(chain.chainId, chain.rpcUrl), transport: http(chain.rpcUrl) });
  // viem ships Multicall3's creation code (for its deployless reads) without exporting it by name.
  const require = createRequire(import.meta.url);
  const contracts = join(dirname(require.resolve('viem')), 'constants', 'contracts.js');
  const { multicall3Bytecode } = require(contracts) as { multicall3Bytecode: Hex };
  const { data } = await client.call({ data: multicall3Bytecode });
  if (!data || data === '0x') throw new Error('Multicall3 creation code returned no runtime code');
  await client.request({ method: 'anvil_setCode' as never, params: [MULTICALL3, data] as never });
}

/**
 * x402's own facilitator with their `exact` and batch-settlement schemes, settling on the test
 * chain from its settler's account (which sends deposits, claims, settles and refunds and pays their
 * gas). It has no receiver authorizer of its own: every claim and refund must bring the
 * authorizer's signature, as hub's do.
 */
export async function x402SessionsFacilitator(chain: ChainDeployment): Promise<x402Facilitator> {
  await placeMulticall3(chain);
  const signer = x402FacilitatorSigner(chain);
  return x402ReferenceFacilitator(chain, chain.settler, signer).register(chain.network, new BatchSettlementFacilitatorScheme(signer));
}

/**
 * `x402SessionsFacilitator` behind the standard HTTP API, at the URL returned; `fault` may answer a
 * request instead (an outage scripted by the test), or leave it to the facilitator (undefined).
 */
export async function startX402SessionsFacilitatorServer(
  t: Tap,
  chain: ChainDeployment,
  fault: (route: Route, body: unknown) => Answer | undefined | Promise<Answer | undefined> = () => undefined,
): Promise<string> {
  const official = await x402SessionsFacilitator(chain);
  return startFacilitatorServer(t, async (route, body) => {
    const faulty = await fault(route, body);
    if (faulty) return faulty;
    if (route === 'supported') return { status: 200, body: official.getSupported() };
    const { paymentPayload, paymentRequirements } = body as { paymentPayload: never; paymentRequirements: never };
    if (route === 'verify') return { status: 200, body: await official.verify(paymentPayload, paymentRequirements) };
    return { status: 200, body: await official.settle(paymentPayload, paymentRequirements) };
  });
}

/**
 * The settings an operator gives hub for a remote facilitator's rail that takes sessions on `chain`:
 * its URL, the token, the chain's RPC (`rpcUrl`, the chain's own unless said) and hub's receiver
 * authorizer, a key of its own with no funds and no transaction to send (the chain's sixth account).
 */
export function remoteSessionsSettings(chain: ChainDeployment & { accounts: DevAccount[] }, facilitatorUrl: string, rpcUrl = chain.rpcUrl) {
  return {
    HUB_FACILITATOR_URL: facilitatorUrl,
    HUB_PAYMENT_NETWORK: chain.network,
    HUB_PAYMENT_TOKEN_ADDRESS: chain.token.address,
    HUB_PAYMENT_TOKEN_NAME: chain.token.name,
    HUB_PAYMENT_TOKEN_VERSION: chain.token.version,
    HUB_PAYMENT_RPC_URL: rpcUrl,
    HUB_PAYMENT_RECEIVER_AUTHORIZER_KEY: chain.accounts[5]!.privateKey,
  };
}
