import { existsSync } from 'node:fs';
import { readDeploymentFile } from '../../chain/deployment.js';
import { ConfigError, type HubConfig } from '../../shared/config.js';
import { type Env, localRail, type PaymentRail, remoteRail } from './rail.js';

/**
 * The rails of a deployment (docs/decisions.md#D-313): the one live sellers are paid on, and
 * beside it, optionally, a test rail for sandbox sellers. A deployment with one rail has it as
 * `live`, whatever its money is worth (the local chain in development serves live and sandbox
 * sellers alike, D-228). A rail is chosen once, when an attempt is made (`railFor`); every later
 * step of that attempt goes to the rail it names (`railOf`), never to "the" rail.
 */
export type PaymentRails = {
  /** Live sellers' rail; a single-rail deployment's one rail. Absent: no rail configured. */
  live?: PaymentRail | undefined;
  /** Sandbox sellers' rail beside a live one: always a test rail. */
  test?: PaymentRail | undefined;
};

/** The rails, checked (a ConfigError otherwise): a test rail is one, beside a live rail that is not, on a network of its own. */
function paymentRails(live: PaymentRail | undefined, test?: PaymentRail): PaymentRails {
  if (!test) return { live };
  if (!live) throw new ConfigError('a test rail is only ever beside a live one');
  if (!test.test) throw new ConfigError(`the test rail ${test.name} is not a test rail`);
  if (live.test)
    throw new ConfigError(
      `the live rail ${live.name} is a test rail (HUB_PAYMENT_TEST_RAIL=1), which serves sandbox sellers already: no second test rail beside it`,
    );
  if (live.network === test.network)
    throw new ConfigError(`the live and test rails are both on ${live.network}: give each a network of its own`);
  return { live, test };
}

/**
 * Finds the rails (docs/decisions.md#D-313). The live rail: a remote facilitator when
 * HUB_FACILITATOR_URL is set (production; with HUB_PAYMENT_RPC_URL, hub reads the chain for what
 * its answers leave open), otherwise the local chain described by `hub chain up` in
 * `HUB_CHAIN_FILE` (development), with hub's in-process facilitator settling from the chain's
 * settler key. Beside a remote live rail, a test rail for sandbox sellers: a remote facilitator on
 * a test network (HUB_TEST_FACILITATOR_URL, its settings the live ones' `HUB_TEST_` twins), or the
 * local chain of a `HUB_CHAIN_FILE` set explicitly. No rail: priced challenges answer 503 until one
 * is configured; identity challenges still work.
 */
export async function resolvePaymentRails(config: HubConfig, env: Env = process.env): Promise<PaymentRails> {
  if (!env.HUB_FACILITATOR_URL) {
    if (env.HUB_TEST_FACILITATOR_URL)
      throw new ConfigError(
        'HUB_TEST_FACILITATOR_URL is the test rail beside a live one: set HUB_FACILITATOR_URL too (a deployment on a test network alone sets HUB_FACILITATOR_URL with HUB_PAYMENT_TEST_RAIL=1)',
      );
    if (!existsSync(config.chainFile)) return {};
    return { live: localRail(await readDeploymentFile(config.chainFile)) };
  }
  const live = remoteRail(env, 'live');
  // A chain file only at the default place (a data directory that once ran `hub chain up`) is no test rail.
  const chainFile = env.HUB_CHAIN_FILE !== undefined && existsSync(config.chainFile) ? config.chainFile : undefined;
  if (env.HUB_TEST_FACILITATOR_URL && chainFile)
    throw new ConfigError(
      `both HUB_TEST_FACILITATOR_URL and the local chain of HUB_CHAIN_FILE (${chainFile}) would be the test rail: keep one`,
    );
  const test = env.HUB_TEST_FACILITATOR_URL
    ? remoteRail(env, 'test')
    : chainFile
      ? localRail(await readDeploymentFile(chainFile))
      : undefined;
  return paymentRails(live, test);
}

/** Every configured rail, the live one first. */
export function railsIn(rails: PaymentRails): PaymentRail[] {
  return [rails.live, rails.test].filter((rail): rail is PaymentRail => rail !== undefined);
}

/**
 * The rail a new attempt of `seller` is made on: a sandbox seller's is the test rail when there is
 * one, anyone else's the live rail. Undefined when none is configured. A sandbox seller with no
 * test rail beside a live one gets the live rail, which `refuseLiveRailForSandbox` refuses.
 */
export function railFor(rails: PaymentRails, seller: { sandbox: boolean }): PaymentRail | undefined {
  return seller.sandbox && rails.test ? rails.test : rails.live;
}

/**
 * The rail an attempt was made on, from what it recorded (`network`, `asset`): undefined when no
 * configured rail is that one any more, and the attempt is then neither claimed nor settled on
 * another (an authorization signed for one network cannot pay on another).
 */
export function railOf(rails: PaymentRails, attempt: { network: string | null; asset: string | null }): PaymentRail | undefined {
  const asset = attempt.asset?.toLowerCase();
  return railsIn(rails).find((rail) => rail.network === attempt.network && rail.token.address.toLowerCase() === asset);
}

/** The networks of the configured rails (of those `which` keeps), for a query over their attempts. */
export function networksOf(rails: PaymentRails, which: (rail: PaymentRail) => boolean = () => true): string[] {
  return railsIn(rails)
    .filter(which)
    .map((rail) => rail.network);
}
