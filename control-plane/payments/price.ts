import { ApiError } from '../../shared/errors.js';
import { sumMicros } from '../../shared/money.js';
import { costItem } from '../usage/pricing.js';
import type { PaymentSeller } from './payment-seller.js';

export type UsageItem = { meterSlug: string; quantity?: number | undefined; maxQuantity?: number | undefined };
export type PricedItem = { meterId: string; meterSlug: string; quantity: number; costMicros: bigint };
export type PricedUsage = {
  service: { id: string; slug: string };
  plan: { id: string; slug: string; billingMode: string } | null;
  items: PricedItem[];
  amountMicros: bigint;
  /** Some item is priced at its ceiling: the payment authorizes it, settlement pays what was used. */
  ceiling: boolean;
};

/**
 * Prices the usage a seller's 402 names with the service's pay-as-you-go plan (the one named by
 * `planSlug`, else the oldest payg plan): each item costs `priceUsd` per `unitSize` units, rounded
 * up to whole blocks. An item without a `quantity` is priced at its ceiling: its `maxQuantity`,
 * else the price's `defaultMaxQuantity` (the payment authorizes that; settlement pays what was
 * used). Usage no payg plan prices, or an item with no quantity and no ceiling, is 409
 * `usage_not_priced`.
 */
export async function priceUsage(
  seller: PaymentSeller,
  input: { serviceSlug: string; planSlug?: string | undefined; usage: UsageItem[] },
): Promise<PricedUsage> {
  const found = (await seller.catalog()).services.get(input.serviceSlug);
  if (!found) throw new ApiError('usage_not_priced', `The seller has no service "${input.serviceSlug}".`);
  const service = { id: found.id, slug: found.slug };

  const plan = found.plans.find((p) => p.billingMode === 'payg' && (!input.planSlug || p.slug === input.planSlug));
  const shown = plan ? { id: plan.id, slug: plan.slug, billingMode: plan.billingMode } : null;
  if (input.usage.length === 0) return { service, plan: shown, items: [], amountMicros: 0n, ceiling: false };
  if (!plan) throw new ApiError('usage_not_priced', `No pay-as-you-go plan of "${input.serviceSlug}" prices this usage.`);

  const prices = new Map(plan.prices.map((p) => [p.meterKey, p]));
  const items: PricedItem[] = [];
  let ceiling = false;
  for (const item of input.usage) {
    const price = prices.get(item.meterSlug);
    if (!price) throw new ApiError('usage_not_priced', `The ${plan.slug} plan does not price the meter "${item.meterSlug}".`);
    const quantity = item.quantity ?? item.maxQuantity ?? price.defaultMaxQuantity ?? undefined;
    if (quantity === undefined) {
      throw new ApiError(
        'usage_not_priced',
        `"${item.meterSlug}" names neither quantity nor maxQuantity, and its price has no defaultMaxQuantity.`,
      );
    }
    if (item.quantity === undefined) ceiling = true;
    items.push({ meterId: price.meterId, meterSlug: item.meterSlug, quantity, costMicros: payPerCallCost(BigInt(quantity), price) });
  }
  return {
    service,
    plan: shown,
    items,
    amountMicros: sumMicros(items.map((i) => i.costMicros)),
    ceiling,
  };
}

/**
 * What `quantity` units cost at a pay-as-you-go price: the usage cost rules (usage/pricing.ts)
 * with nothing included, since a payment per call draws on no allowance.
 */
export function payPerCallCost(quantity: bigint, price: { priceMicros: bigint; unitSize: number }): bigint {
  return costItem(quantity, { priceMicros: price.priceMicros, unitSize: BigInt(price.unitSize), includedUnits: 0n }, 0n).costMicros;
}
