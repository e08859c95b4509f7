import { costOf, sumMicros } from '../../shared/money.js';

/**
 * The cost rules of usage (docs/decisions.md › Usage), as pure arithmetic on micro-USD:
 *
 * 1. Included units are drawn first, unit for unit, up to what is left of them this period.
 * 2. Then the plan's credit units (`includedCreditUnits`), one pool a period shared by the plan's
 *    priced meters, unit for unit, item by item in the order asked. A meter that costs nothing
 *    takes none: the pool is worth only what it saves.
 * 3. The rest is priced per started block of `unitSize` units (3 units at $0.01 per 10 cost
 *    $0.01), each item on its own.
 * 4. That cost is paid from credit; without a credit component (or without enough credit) an
 *    item that costs anything is not allowed. Free mode has no credit: only included units.
 */

export type PriceTerms = { priceMicros: bigint; unitSize: bigint; includedUnits: bigint };

export type ItemCost = { quantity: bigint; includedUnits: bigint; creditUnits: bigint; costMicros: bigint };

/** A plan's credit units for one period: how many it grants, and how many were drawn. */
export type CreditUnitPool = { granted: bigint; used: bigint };

const least = (a: bigint, b: bigint) => (a < b ? a : b);
const leftOf = (granted: bigint, used: bigint) => (granted > used ? granted - used : 0n);

/**
 * `quantity` against terms of which `includedUsed` units were already drawn this period, with
 * `creditUnitsLeft` of the plan's pool to draw on.
 */
export function costItem(quantity: bigint, terms: PriceTerms, includedUsed: bigint, creditUnitsLeft = 0n): ItemCost {
  const includedUnits = least(quantity, leftOf(terms.includedUnits, includedUsed));
  const creditUnits = terms.priceMicros === 0n ? 0n : least(quantity - includedUnits, creditUnitsLeft);
  const costMicros = costOf(quantity - includedUnits - creditUnits, terms.priceMicros, terms.unitSize);
  return { quantity, includedUnits, creditUnits, costMicros };
}

/** A whole request's items priced: each item's cost, and their sums. */
export type Bill<Item> = { items: (Item & ItemCost)[]; costMicros: bigint; creditUnits: bigint };

export function bill<Item extends { quantity: bigint; terms: PriceTerms; includedUsed: bigint }>(
  items: readonly Item[],
  pool?: CreditUnitPool,
): Bill<Item> {
  let poolLeft = pool ? leftOf(pool.granted, pool.used) : 0n;
  const priced = items.map((item) => {
    const cost = costItem(item.quantity, item.terms, item.includedUsed, poolLeft);
    poolLeft -= cost.creditUnits;
    return { ...item, ...cost };
  });
  return {
    items: priced,
    costMicros: sumMicros(priced.map((item) => item.costMicros)),
    creditUnits: priced.reduce((sum, item) => sum + item.creditUnits, 0n),
  };
}

/**
 * Whether a bill can be paid: from a credit balance (null when the access has no credit
 * component), or, in free mode, from included units alone.
 */
export function affordable(bill: Bill<object>, balanceMicros: bigint | null): boolean {
  if (bill.costMicros === 0n) return true;
  return balanceMicros !== null && bill.costMicros <= balanceMicros;
}

/**
 * Items that name the same meter are one item with the sum of their quantities (priced once, so
 * unit-size rounding applies to the sum), in the order each meter first appears.
 */
export function mergeItems<Item extends { meterSlug: string; quantity: bigint }>(items: readonly Item[]): Item[] {
  const merged = new Map<string, Item>();
  for (const item of items) {
    const seen = merged.get(item.meterSlug);
    merged.set(item.meterSlug, seen ? { ...seen, quantity: seen.quantity + item.quantity } : item);
  }
  return [...merged.values()];
}
