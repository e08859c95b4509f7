import { ExpiringCache } from '../../shared/expiring-cache.js';

/**
 * A seller's catalog, in whatever shape a reader keeps it, held in memory for as long as the
 * seller's `updatedAt` (its `version`, read with the seller on every call) stays where it was when
 * the catalog was read. Every catalog write marks the seller changed in its own transaction
 * (guards.ts › touchSeller), so a kept catalog is never stale, whichever control-plane process
 * made the change. Payments (payments/payment-seller.ts) and usage (usage/catalog.ts) each keep
 * one, per database handle (`owner`).
 */
export function catalogVersions<Owner extends object, Catalog>() {
  const caches = new WeakMap<Owner, ExpiringCache<string, { version: number; catalog: Promise<Catalog> }>>();
  return (owner: Owner, sellerId: string, version: number, load: () => Promise<Catalog>, now = Date.now()): Promise<Catalog> => {
    let cache = caches.get(owner);
    if (!cache) {
      // Bounded for a deployment of many sellers; an idle seller's catalog is dropped after a while.
      cache = new ExpiringCache({ ttlMs: 10 * 60_000, maxEntries: 10_000 });
      caches.set(owner, cache);
    }
    const cached = cache.get(sellerId, now);
    if (cached?.version === version) return cached.catalog;
    // Read after the row that gave `version`: a change committed in between leaves a newer
    // catalog under an older version, which the next call reloads.
    const catalog = load();
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
  };
}

/**
 * A catalog read this soon after the seller's last change is not kept: two changes in the same
 * millisecond would leave `updatedAt` as it was, and control-planes on other machines stamp it
 * with clocks that may differ from this one by about as much (the proxy's change feed allows the
 * same overlap).
 */
const SETTLED_AFTER_MS = 2_000;
