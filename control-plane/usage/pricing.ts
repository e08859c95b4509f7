import { costOf, sumMicros } from '../../shared/money.js';

/**
 * The cost rules of usage (docs/decisions.md › Usage), as pure arithmetic on micro-USD:
 *
 * 1. Included units are drawn first, unit for unit, up to what is left of them this period.
 * 2. The rest is priced per started block of `unitSize` units (3 units at $0.01 per 10 cost
 *    $0.01), each item on its own.
 * 3. That cost is paid from credit; without a credit component (or without enough credit) an
 *    item that costs anything is not allowed. Free mode has no credit: only included units.
 */

export type PriceTerms = { priceMicros: bigint; unitSize: bigint; includedUnits: bigint };

export type ItemCost = { quantity: bigint; includedUnits: bigint; costMicros: bigint };

/** `quantity` against terms of which `includedUsed` units were already drawn this period. */
export function costItem(quantity: bigint, terms: PriceTerms, includedUsed: bigint): ItemCost {
  const left = terms.includedUnits > includedUsed ? terms.includedUnits - includedUsed : 0n;
  const includedUnits = quantity < left ? quantity : left;
  return { quantity, includedUnits, costMicros: costOf(quantity - includedUnits, terms.priceMicros, terms.unitSize) };
}

/** A whole request's items priced: each item's cost, and their sum. */
export type Bill<Item> = { items: (Item & ItemCost)[]; costMicros: bigint };

export function bill<Item extends { quantity: bigint; terms: PriceTerms; includedUsed: bigint }>(items: readonly Item[]): Bill<Item> {
  const priced = items.map((item) => ({ ...item, ...costItem(item.quantity, item.terms, item.includedUsed) }));
  return { items: priced, costMicros: sumMicros(priced.map((item) => item.costMicros)) };
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
