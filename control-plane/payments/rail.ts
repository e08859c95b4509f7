import type { Hex } from 'viem';
import { whyChainDoesNotAnswer } from '../../chain/answers.js';
import type { ChainDeployment } from '../../chain/deployment.js';
import { oneLine } from '../../runtime/process.js';
import { ConfigError } from '../../shared/config.js';
import { chainIdOf } from '../../shared/payments/evm-network.js';
import type { PaymentPayload, PaymentRequirements } from '../../shared/payments/x402-wire.js';
import { ChainWitness } from '../facilitator/chain-witness.js';
import type { EscrowPayout } from '../facilitator/escrow.js';
import type { Facilitator } from '../facilitator/facilitator.js';
import { HttpFacilitator } from '../facilitator/http-facilitator.js';
import { LocalFacilitator } from '../facilitator/local-facilitator.js';
import type { SettleResult } from '../facilitator/results.js';
import { remoteSessions } from '../sessions/facilitator-session-rail.js';
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

/** The names a remote rail's settings go by (the live rail's, and their `HUB_TEST_` twins), its name and whether it is a test rail. */
type RailSettings = { facilitatorUrl: string; payment: string; name: (symbol: string) => string; test: boolean };
export type Env = Record<string, string | undefined>;
const liveSettings = (env: Env): RailSettings => ({
  facilitatorUrl: 'HUB_FACILITATOR_URL',
  payment: 'HUB_PAYMENT',
  name: () => env.HUB_PAYMENT_RAIL ?? 'usdc',
  test: env.HUB_PAYMENT_TEST_RAIL === '1',
});
const TEST_SETTINGS: RailSettings = {
  facilitatorUrl: 'HUB_TEST_FACILITATOR_URL',
  payment: 'HUB_TEST_PAYMENT',
  name: (symbol) => `test_${symbol.toLowerCase()}`,
  test: true,
};

/**
 * A rail settled by a remote x402 facilitator, as `HUB_FACILITATOR_URL` and the `HUB_PAYMENT_`
 * settings configure the live one and their `HUB_TEST_` twins the test one (rails.ts).
 */
export function remoteRail(env: Env, which: 'live' | 'test'): PaymentRail {
  const settings = which === 'live' ? liveSettings(env) : TEST_SETTINGS;
  const url = env[settings.facilitatorUrl]!;
  const setting = (name: string) => env[`${settings.payment}_${name}`];
  const required = (name: string) => {
    const value = setting(name);
    if (!value) throw new ConfigError(`${settings.payment}_${name} is required when ${settings.facilitatorUrl} is set`);
    return value;
  };
  const network = required('NETWORK') as `${string}:${string}`;
  const rpcUrl = setting('RPC_URL');
  const chainId = chainIdOf(network);
  if (rpcUrl && !/^https?:\/\/[^/]/.test(rpcUrl)) throw new ConfigError(`${settings.payment}_RPC_URL must be an http(s) URL`);
  if (rpcUrl && chainId === undefined)
    throw new ConfigError(`${settings.payment}_RPC_URL needs an EVM ${settings.payment}_NETWORK (eip155:<chain id>)`);
  const witness = rpcUrl && chainId !== undefined ? new ChainWitness({ rpcUrl, chainId }) : undefined;
  const facilitator = new HttpFacilitator({ url, ...(witness ? { witness } : {}) });
  const symbol = setting('TOKEN_SYMBOL') ?? 'USDC';
  const token = {
    address: required('TOKEN_ADDRESS') as Hex,
    name: setting('TOKEN_NAME') ?? 'USD Coin',
    version: setting('TOKEN_VERSION') ?? '2',
    decimals: Number(setting('TOKEN_DECIMALS') ?? 6),
    symbol,
  };
  const sessions = remoteSessions(settings.payment, setting('RECEIVER_AUTHORIZER_KEY'), { facilitator, witness, network, token });
  return {
    name: settings.name(symbol),
    network,
    token,
    facilitator,
    ...(sessions ? { sessions } : {}),
    test: settings.test,
    maxTimeoutSeconds: CHALLENGE_LIFETIME_SECONDS,
    readsChain: witness !== undefined,
    whyUnavailable: () =>
      facilitator.supported().then(
        ({ kinds }) => (kinds.some((kind) => kind.network === network) ? undefined : `the facilitator does not settle on ${network}`),
        (err: unknown) => `the facilitator does not answer (${oneLine(err)})`,
      ),
  };
}

/** A rail on a local EVM chain (anvil in development and tests), settled in process. */
export function localRail(chain: ChainDeployment): PaymentRail {
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
