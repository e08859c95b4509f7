import type { DiscoveryCatalog } from '../../shared/contract.js';
import { ApiError } from '../../shared/errors.js';
import { formatUsd } from '../../shared/money.js';
import { routesOf } from '../catalog/routes.js';
import type { Db } from '../db/client.js';
import { paymentSeller } from '../payments/payment-seller.js';
import { priceUsage } from '../payments/price.js';
import { type PaymentRails, railFor } from '../payments/rails.js';

/**
 * What the discovery documents are made from: each declared route priced by the same code that
 * prices the seller's 402 (payments/price.ts), so a document never quotes another price than the
 * challenge an agent then gets, and every price with its note. Null when there is no such seller.
 */
export async function discoveryCatalog(db: Db, rails: PaymentRails, sellerId: string): Promise<DiscoveryCatalog | null> {
  const [seller, payer] = await Promise.all([
    db.seller.findUnique({
      where: { id: sellerId },
      include: {
        services: {
          orderBy: [{ slug: 'asc' }],
          include: {
            plans: {
              orderBy: [{ createdAt: 'asc' }, { id: 'asc' }],
              include: { prices: { include: { meter: true }, orderBy: [{ createdAt: 'asc' }, { id: 'asc' }] } },
            },
          },
        },
      },
    }),
    paymentSeller(db, sellerId),
  ]);
  if (!seller || !payer) return null;
  // The rail its challenges are made on (a sandbox seller's test rail, D-313).
  const rail = railFor(rails, seller);
  const routes: DiscoveryCatalog['routes'] = [];
  for (const service of seller.services) {
    for (const route of routesOf(service)) {
      const price = await priceUsage(payer, { serviceSlug: service.slug, usage: route.usage }).catch((err: unknown) => {
        if (err instanceof ApiError && err.code === 'usage_not_priced') return undefined;
        throw err;
      });
      routes.push({
        serviceSlug: service.slug,
        route,
        price: price?.plan
          ? { planSlug: price.plan.slug, amountMicros: price.amountMicros.toString(), amountUsd: formatUsd(price.amountMicros) }
          : null,
      });
    }
  }
  return {
    seller: { id: seller.id, slug: seller.slug, name: seller.name },
    // A sandbox seller is paid on a test rail only (D-228): on a live one its calls cannot be paid.
    payment:
      rail && seller.payToAddress && (!seller.sandbox || rail.test)
        ? {
            network: rail.network,
            asset: rail.token.address,
            decimals: rail.token.decimals,
            payTo: seller.payToAddress,
            maxTimeoutSeconds: rail.maxTimeoutSeconds,
          }
        : null,
    salesEnabled: seller.salesEnabled,
    routes,
    prices: seller.services.flatMap((service) =>
      service.plans.flatMap((plan) =>
        plan.prices.map((p) => ({
          serviceSlug: service.slug,
          planSlug: plan.slug,
          billingMode: plan.billingMode,
          meterSlug: p.meter.key,
          unit: p.meter.unit,
          priceUsd: formatUsd(p.priceMicros),
          unitSize: p.unitSize,
          description: p.description,
        })),
      ),
    ),
  };
}
