import { Prisma } from '../../generated/prisma/sqlite/client.js';
import { ExpiringCache } from '../../shared/expiring-cache.js';
import type { SettlementTiming } from '../../shared/schemas/sellers.js';
import type { Db } from '../db/client.js';
import { booleanOf, dateOf, sqlOf } from '../db/sql.js';

/**
 * A seller as payments read it: its row, read on every call (the payout wallet must be current,
 * and `updatedAt` says whether its catalog changed), and its catalog of services, plans and
 * prices, kept in memory per seller until `updatedAt` moves. Every catalog write marks the seller
 * changed in its own transaction (catalog/guards.ts › touchSeller), and any write to the seller row
 * moves `updatedAt` too, so a price is never read stale, whichever control-plane process made the
 * change: the challenge and the settlement read one row instead of four or five.
 */
export type PaymentSeller = {
  id: string;
  organizationId: string;
  payToAddress: string | null;
  salesEnabled: boolean;
  settlement: SettlementTiming;
  catalog(): Promise<SellerCatalog>;
};

export type CatalogPrice = {
  meterId: string;
  meterKey: string;
  priceMicros: bigint;
  unitSize: number;
  defaultMaxQuantity: number | null;
};
export type CatalogPlan = { id: string; slug: string; billingMode: string; prices: CatalogPrice[] };
/** `plans` oldest first (then by id), the order pricing picks a pay-as-you-go plan in. */
export type CatalogService = { id: string; slug: string; plans: CatalogPlan[] };
export type SellerCatalog = { services: Map<string, CatalogService>; plans: Map<string, CatalogPlan> };

/**
 * A catalog loaded this soon after the seller's last change is not kept: two changes in the same
 * millisecond would leave `updatedAt` as it was, and control-planes on other machines stamp it
 * with clocks that may differ from this one by about as much (the proxy's change feed allows the
 * same overlap).
 */
const SETTLED_AFTER_MS = 2_000;

type Entry = { version: number; catalog: Promise<SellerCatalog> };
const caches = new WeakMap<Db, ExpiringCache<string, Entry>>();

/** The seller, or null when there is none. */
export async function paymentSeller(db: Db, sellerId: string): Promise<PaymentSeller | null> {
  const row = await sqlOf(db).get<{
    organizationId: string;
    payToAddress: string | null;
    salesEnabled: unknown;
    settlement: string;
    updatedAt: unknown;
  }>(Prisma.sql`SELECT "organizationId", "payToAddress", "salesEnabled", "settlement", "updatedAt" FROM "Seller" WHERE "id" = ${sellerId}`);
  if (!row) return null;
  const version = dateOf(row.updatedAt).getTime();
  let catalog: Promise<SellerCatalog> | undefined;
  return {
    id: sellerId,
    organizationId: row.organizationId,
    payToAddress: row.payToAddress,
    salesEnabled: booleanOf(row.salesEnabled),
    settlement: row.settlement as SettlementTiming,
    catalog: () => {
      catalog ??= cachedCatalog(db, sellerId, version);
      return catalog;
    },
  };
}

function cachedCatalog(db: Db, sellerId: string, version: number): Promise<SellerCatalog> {
  let cache = caches.get(db);
  if (!cache) {
    // Bounded for a deployment of many sellers; an idle seller's catalog is dropped after a while.
    cache = new ExpiringCache({ ttlMs: 10 * 60_000, maxEntries: 10_000 });
    caches.set(db, cache);
  }
  const cached = cache.get(sellerId);
  if (cached?.version === version) return cached.catalog;
  // Read after the row that gave `version`: a change committed in between leaves a newer
  // catalog under an older version, which the next call reloads.
  const catalog = loadCatalog(db, sellerId);
  if (Date.now() - version < SETTLED_AFTER_MS) {
    cache.delete(sellerId);
    return catalog;
  }
  const entry = { version, catalog };
  cache.set(sellerId, entry);
  // A failed read is not kept.
  catalog.catch(() => {
    if (cache.get(sellerId) === entry) cache.delete(sellerId);
  });
  return catalog;
}

async function loadCatalog(db: Db, sellerId: string): Promise<SellerCatalog> {
  const services = await db.service.findMany({
    where: { sellerId },
    select: {
      id: true,
      slug: true,
      plans: {
        orderBy: [{ createdAt: 'asc' }, { id: 'asc' }],
        select: {
          id: true,
          slug: true,
          billingMode: true,
          prices: {
            select: { meterId: true, priceMicros: true, unitSize: true, defaultMaxQuantity: true, meter: { select: { key: true } } },
          },
        },
      },
    },
  });
  const catalog: SellerCatalog = { services: new Map(), plans: new Map() };
  for (const service of services) {
    const plans = service.plans.map((plan) => ({
      id: plan.id,
      slug: plan.slug,
      billingMode: plan.billingMode,
      prices: plan.prices.map(({ meter, ...price }) => ({ ...price, meterKey: meter.key })),
    }));
    catalog.services.set(service.slug, { id: service.id, slug: service.slug, plans });
    for (const plan of plans) catalog.plans.set(plan.id, plan);
  }
  return catalog;
}
