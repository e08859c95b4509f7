import type { PaymentRail } from './rail.js';

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

/** The rails, checked: a test rail is one, beside a live rail that is not, on a network of its own. */
export function paymentRails(live: PaymentRail | undefined, test?: PaymentRail): PaymentRails {
  if (!test) return { live };
  if (!live) throw new Error('a test rail is only ever beside a live one');
  if (!test.test) throw new Error(`the test rail ${test.name} is not a test rail`);
  if (live.test)
    throw new Error(
      `the live rail ${live.name} is a test rail (HUB_PAYMENT_TEST_RAIL=1), which serves sandbox sellers already: no second test rail beside it`,
    );
  if (live.network === test.network) throw new Error(`the live and test rails are both on ${live.network}: give each a network of its own`);
  return { live, test };
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
