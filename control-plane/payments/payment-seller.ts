import { Prisma } from '../../generated/prisma/sqlite/client.js';
import { type SettlementTiming, type X402Scheme, x402SchemesOf } from '../../shared/schemas/sellers.js';
import { catalogVersions } from '../catalog/catalog-versions.js';
import type { Db } from '../db/client.js';
import { booleanOf, dateOf, sqlOf } from '../db/sql.js';

/**
 * A seller as payments read it: its row, read on every call (the payout wallet must be current,
 * and `updatedAt` says whether its catalog changed), and its catalog of services, plans and
 * prices, kept in memory per seller until `updatedAt` moves (catalog/catalog-versions.ts; any write
 * to the seller row moves it too): the challenge and the settlement read one row instead of four
 * or five.
 */
export type PaymentSeller = {
  id: string;
  organizationId: string;
  payToAddress: string | null;
  salesEnabled: boolean;
  /** Paid on a test rail only (payments/test-rail.ts). */
  sandbox: boolean;
  settlement: SettlementTiming;
  /** The x402 schemes its 402 offers: `exact`, and `batch-settlement` when it takes sessions. */
  x402Schemes: X402Scheme[];
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

const cachedCatalog = catalogVersions<Db, SellerCatalog>();

/** The seller, or null when there is none. */
export async function paymentSeller(db: Db, sellerId: string): Promise<PaymentSeller | null> {
  const row = await sqlOf(db).get<{
    organizationId: string;
    payToAddress: string | null;
    salesEnabled: unknown;
    sandbox: unknown;
    settlement: string;
    x402SchemesJson: string;
    updatedAt: unknown;
  }>(
    Prisma.sql`SELECT "organizationId", "payToAddress", "salesEnabled", "sandbox", "settlement", "x402SchemesJson", "updatedAt" FROM "Seller" WHERE "id" = ${sellerId}`,
  );
  if (!row) return null;
  const version = dateOf(row.updatedAt).getTime();
  let catalog: Promise<SellerCatalog> | undefined;
  return {
    id: sellerId,
    organizationId: row.organizationId,
    payToAddress: row.payToAddress,
    salesEnabled: booleanOf(row.salesEnabled),
    sandbox: booleanOf(row.sandbox),
    settlement: row.settlement as SettlementTiming,
    x402Schemes: x402SchemesOf(row.x402SchemesJson),
    catalog: () => {
      catalog ??= cachedCatalog(db, sellerId, version, () => loadCatalog(db, sellerId));
      return catalog;
    },
  };
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
