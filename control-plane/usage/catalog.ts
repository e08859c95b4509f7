import { ExpiringCache } from '../../shared/expiring-cache.js';
import type { PriceRow, ServiceRow, UsageReader } from './reader.js';

/**
 * A seller's catalog as usage reads it (meters by key, prices, pay-as-you-go plans), kept in
 * memory per seller for as long as the seller's `updatedAt` stays where it was when the catalog
 * was read. Every catalog write marks the seller changed in its own transaction
 * (catalog/guards.ts › touchSeller), and the check's lookup reads `updatedAt` with the service
 * (reader.ts), so a price, a meter or a plan is never read stale, whichever control-plane
 * process changed it: the same rule as payments' seller catalog (payments/payment-seller.ts).
 */
export type UsageCatalog = {
  /** The meter's id by `${serviceId} ${key}`. */
  meters: Map<string, string>;
  /** By `${planId} ${meterId}`. */
  prices: Map<string, PriceRow>;
  /** The service's pay-as-you-go plan (the oldest, when there are several), by service id. */
  paygPlans: Map<string, { id: string; interval: string }>;
};

export const meterKey = (serviceId: string, key: string) => `${serviceId} ${key}`;
export const priceKey = (planId: string, meterId: string) => `${planId} ${meterId}`;

/**
 * A catalog read this soon after the seller's last change is not kept: two changes in the same
 * millisecond would leave `updatedAt` as it was, and control-planes on other machines stamp it
 * with clocks that may differ from this one by about as much.
 */
const SETTLED_AFTER_MS = 2_000;

type Entry = { version: number; catalog: Promise<UsageCatalog> };
const caches = new WeakMap<UsageReader, ExpiringCache<string, Entry>>();

/** The catalog of the service's seller, as of the `version` the lookup read with the service. */
export function usageCatalog(reader: UsageReader, service: ServiceRow, now = Date.now()): Promise<UsageCatalog> {
  let cache = caches.get(reader);
  if (!cache) {
    // Bounded for a deployment of many sellers; an idle seller's catalog is dropped after a while.
    cache = new ExpiringCache({ ttlMs: 10 * 60_000, maxEntries: 10_000 });
    caches.set(reader, cache);
  }
  const { sellerId, version } = service;
  const cached = cache.get(sellerId, now);
  if (cached?.version === version) return cached.catalog;
  // Read after the row that gave `version`: a change committed in between leaves a newer
  // catalog under an older version, which the next lookup reloads.
  const catalog = loadCatalog(reader, sellerId);
  if (now - version < SETTLED_AFTER_MS) {
    cache.delete(sellerId);
    return catalog;
  }
  const entry = { version, catalog };
  cache.set(sellerId, entry, undefined, now);
  // A failed read is not kept.
  catalog.catch(() => {
    if (cache.get(sellerId) === entry) cache.delete(sellerId);
  });
  return catalog;
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
  };
}
