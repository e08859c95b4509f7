import { catalogVersions } from '../catalog/catalog-versions.js';
import type { PriceRow, ServiceRow, UsageReader } from './reader.js';

/**
 * A seller's catalog as usage reads it (meters by key, prices, pay-as-you-go plans, credit units), kept in
 * memory per seller for as long as the seller's `updatedAt` stays where it was when the catalog
 * was read (catalog/catalog-versions.ts, the rule payments' seller catalog follows too); the
 * check's lookup reads `updatedAt` with the service (reader.ts).
 */
export type UsageCatalog = {
  /** The meter's id by `${serviceId} ${key}`. */
  meters: Map<string, string>;
  /** By `${planId} ${meterId}`. */
  prices: Map<string, PriceRow>;
  /** The service's pay-as-you-go plan (the oldest, when there are several), by service id. */
  paygPlans: Map<string, { id: string; interval: string }>;
  /** The credit units a plan grants each period, by plan id, for plans that grant any. */
  creditUnits: Map<string, bigint>;
};

export const meterKey = (serviceId: string, key: string) => `${serviceId} ${key}`;
export const priceKey = (planId: string, meterId: string) => `${planId} ${meterId}`;

const cachedCatalog = catalogVersions<UsageReader, UsageCatalog>();

/** The catalog of the service's seller, as of the `version` the lookup read with the service. */
export function usageCatalog(reader: UsageReader, service: ServiceRow, now = Date.now()): Promise<UsageCatalog> {
  return cachedCatalog(reader, service.sellerId, service.version, () => loadCatalog(reader, service.sellerId), now);
}

async function loadCatalog(reader: UsageReader, sellerId: string): Promise<UsageCatalog> {
  const rows = await reader.catalogRows(sellerId);
  const paygPlans = new Map<string, { id: string; interval: string }>();
  for (const plan of rows.paygPlans)
    if (!paygPlans.has(plan.serviceId)) paygPlans.set(plan.serviceId, { id: plan.id, interval: plan.interval });
  return {
    meters: new Map(rows.meters.map((meter) => [meterKey(meter.serviceId, meter.key), meter.id])),
    prices: new Map(rows.prices.map((price) => [priceKey(price.planId, price.meterId), price])),
    paygPlans,
    creditUnits: new Map(rows.creditUnitPlans.map((plan) => [plan.id, plan.includedCreditUnits])),
  };
}
