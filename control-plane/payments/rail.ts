import { existsSync } from 'node:fs';
import type { Hex } from 'viem';
import { whyChainDoesNotAnswer } from '../../chain/answers.js';
import { readDeploymentFile } from '../../chain/deployment.js';
import { oneLine } from '../../runtime/process.js';
import type { HubConfig } from '../../shared/config.js';
import type { PaymentPayload, PaymentRequirements } from '../../shared/payments/x402-wire.js';
import { ChainWitness } from '../facilitator/chain-witness.js';
import type { EscrowPayout } from '../facilitator/escrow.js';
import type { Facilitator } from '../facilitator/facilitator.js';
import { HttpFacilitator } from '../facilitator/http-facilitator.js';
import { LocalFacilitator } from '../facilitator/local-facilitator.js';
import type { SettleResult } from '../facilitator/results.js';
import { localSessionRail, type SessionRail } from '../sessions/session-rail.js';
import { localFaucet } from './faucet.js';

/**
 * The payment rail a deployment takes payments on: one network, one token, one facilitator.
 * `name` is what challenges call the rail (`payment.rail`, e.g. `base_usdc`).
 */
export type PaymentRail = {
  name: string;
  network: `${string}:${string}`;
  token: { address: Hex; name: string; version: string; decimals: number; symbol: string };
  facilitator: Facilitator;
  /**
   * Reserve-and-pay-actual, for ceiling-priced calls: challenges name `address` as `payTo`, and
   * `settle` pays the seller what was charged and returns the rest in one transaction. Absent:
   * ceiling pricing answers 503 `capped_pricing_unavailable`.
   */
  escrow?: {
    address: Hex;
    settle(payload: PaymentPayload, requirements: PaymentRequirements, payout: EscrowPayout): Promise<SettleResult>;
  };
  /**
   * x402 batch-settlement (sessions): channels on the chain, deposits hub submits. Absent: the
   * 402 offers `exact` only, whatever the seller's `x402Schemes` (docs/decisions.md#D-281).
   */
  sessions?: SessionRail;
  /**
   * Its money has no value: a local dev chain, or a remote rail the operator declared a test
   * network (HUB_PAYMENT_TEST_RAIL=1). Sandbox sellers are paid on such a rail only (test-rail.ts).
   * Absent: a live rail.
   */
  test?: boolean;
  /**
   * Gives an address test tokens, for sandbox test agents: on a local chain, minted with its
   * deployer's key. Absent on rails hub cannot mint on.
   */
  faucet?: (to: Hex, micros: bigint) => Promise<Hex>;
  /** How long a signed authorization may take to arrive, and how long a challenge stays open. */
  maxTimeoutSeconds: number;
  /**
   * The rail reads the chain, which can tell what became of a settlement no facilitator answer
   * could (`outcome_unknown`): the pending loop looks at those again.
   */
  readsChain: boolean;
  /**
   * Why the rail cannot take payments right now (its chain or facilitator does not answer), or
   * undefined when it can; start-up and `/readyz` say it. Absent: taken to be able to.
   */
  whyUnavailable?: () => Promise<string | undefined>;
};

export const CHALLENGE_LIFETIME_SECONDS = 300;

/**
 * Finds the rail: a remote facilitator when HUB_FACILITATOR_URL is set (production; with
 * HUB_PAYMENT_RPC_URL, hub reads the chain for what its answers leave open), otherwise
 * the local chain described by `hub chain up` in `HUB_CHAIN_FILE` (development), with
 * hub's in-process facilitator settling from the chain's settler key. No rail: priced challenges
 * answer 503 until one is configured; identity challenges still work.
 */
export async function resolvePaymentRail(
  config: HubConfig,
  env: Record<string, string | undefined> = process.env,
): Promise<PaymentRail | undefined> {
  if (env.HUB_FACILITATOR_URL) {
    const network = required(env, 'HUB_PAYMENT_NETWORK') as `${string}:${string}`;
    const rpcUrl = env.HUB_PAYMENT_RPC_URL;
    const chainId = Number(/^eip155:(\d+)$/.exec(network)?.[1]);
    if (rpcUrl && !/^https?:\/\/[^/]/.test(rpcUrl)) throw new Error('HUB_PAYMENT_RPC_URL must be an http(s) URL');
    if (rpcUrl && !Number.isSafeInteger(chainId))
      throw new Error('HUB_PAYMENT_RPC_URL needs an EVM HUB_PAYMENT_NETWORK (eip155:<chain id>)');
    const witness = rpcUrl ? new ChainWitness({ rpcUrl, chainId }) : undefined;
    const facilitator = new HttpFacilitator({ url: env.HUB_FACILITATOR_URL, ...(witness ? { witness } : {}) });
    return {
      name: env.HUB_PAYMENT_RAIL ?? 'usdc',
      network,
      token: {
        address: required(env, 'HUB_PAYMENT_TOKEN_ADDRESS') as Hex,
        name: env.HUB_PAYMENT_TOKEN_NAME ?? 'USD Coin',
        version: env.HUB_PAYMENT_TOKEN_VERSION ?? '2',
        decimals: Number(env.HUB_PAYMENT_TOKEN_DECIMALS ?? 6),
        symbol: env.HUB_PAYMENT_TOKEN_SYMBOL ?? 'USDC',
      },
      facilitator,
      test: env.HUB_PAYMENT_TEST_RAIL === '1',
      maxTimeoutSeconds: CHALLENGE_LIFETIME_SECONDS,
      readsChain: witness !== undefined,
      whyUnavailable: () =>
        facilitator.supported().then(
          ({ kinds }) => (kinds.some((kind) => kind.network === network) ? undefined : `the facilitator does not settle on ${network}`),
          (err: unknown) => `the facilitator does not answer (${oneLine(err)})`,
        ),
    };
  }
  if (!existsSync(config.chainFile)) return undefined;
  const chain = await readDeploymentFile(config.chainFile);
  return localRail(chain);
}

/** A rail on a local EVM chain (anvil in development and tests), settled in process. */
export function localRail(chain: Awaited<ReturnType<typeof readDeploymentFile>>): PaymentRail {
  const facilitator = new LocalFacilitator({
    rpcUrl: chain.rpcUrl,
    chainId: chain.chainId,
    tokens: [{ address: chain.token.address, name: chain.token.name, version: chain.token.version }],
    settlerPrivateKey: chain.settler.privateKey as Hex,
    // A local chain mines each transaction as it arrives: send in nonce order and take the receipt
    // with the send (anvil knows eth_sendRawTransactionSync); should it be polled for, often.
    pollingIntervalMs: 25,
    sendInOrder: true,
    sendSync: true,
    ...(chain.escrow ? { escrow: chain.escrow } : {}),
  });
  const escrow = chain.escrow;
  return {
    name: `local_${chain.token.symbol.toLowerCase()}`,
    network: chain.network,
    token: { ...chain.token, address: chain.token.address as Hex },
    facilitator,
    ...(escrow
      ? {
          escrow: { address: escrow, settle: (payload, requirements, payout) => facilitator.settleEscrowed(payload, requirements, payout) },
        }
      : {}),
    ...(chain.batchSettlement ? { sessions: localSessionRail(facilitator) } : {}),
    test: true,
    faucet: localFaucet(chain),
    maxTimeoutSeconds: CHALLENGE_LIFETIME_SECONDS,
    readsChain: true,
    whyUnavailable: () => whyChainDoesNotAnswer(chain),
  };
}

function required(env: Record<string, string | undefined>, name: string): string {
  const value = env[name];
  if (!value) throw new Error(`${name} is required when HUB_FACILITATOR_URL is set`);
  return value;
}
