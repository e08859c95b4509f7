import type { SellerManifest } from '../../shared/contract.js';
import { formatUsd } from '../../shared/money.js';
import type { Db } from '../db/client.js';

/** `GET /manifest.json` on the pay URL: the seller's plans with their per-meter prices. */
export async function sellerManifest(db: Db, sellerId: string): Promise<SellerManifest | null> {
  const seller = await db.seller.findUnique({
    where: { id: sellerId },
    include: {
      services: {
        orderBy: { slug: 'asc' },
        include: { plans: { orderBy: { slug: 'asc' }, include: { prices: { include: { meter: true }, orderBy: { createdAt: 'asc' } } } } },
      },
    },
  });
  if (!seller) return null;
  return {
    seller: { id: seller.id, slug: seller.slug, name: seller.name },
    plans: seller.services.flatMap((service) =>
      service.plans.map((plan) => ({
        id: plan.id,
        slug: plan.slug,
        name: plan.name,
        serviceSlug: service.slug,
        billingMode: plan.billingMode,
        interval: plan.interval,
        // Pay-as-you-go plans are paid per call, never bought (payg_not_purchasable).
        purchasable: plan.billingMode !== 'payg',
        basePriceUsd: formatUsd(plan.basePriceMicros),
        includedCreditUsd: formatUsd(plan.includedCreditMicros),
        minimumPurchaseUsd: formatUsd(plan.minimumPurchaseMicros),
        prices: plan.prices.map((p) => ({
          meterSlug: p.meter.key,
          unit: p.meter.unit,
          priceUsd: formatUsd(p.priceMicros),
          unitSize: p.unitSize,
          includedUnits: p.includedUnits,
          defaultMaxQuantity: p.defaultMaxQuantity,
        })),
      })),
    ),
  };
}
