import type { DiscoveryCatalog } from '../contract.js';

type DiscoveredRoute = DiscoveryCatalog['routes'][number];
export type DiscoveredPrice = DiscoveryCatalog['prices'][number];

/** The prices a priced route's call draws on: its usage's meters on the plan that prices it. */
export function routePrices(catalog: DiscoveryCatalog, entry: DiscoveredRoute): DiscoveredPrice[] {
  const { price } = entry;
  if (!price) return [];
  const meters = new Set(entry.route.usage.map((u) => u.meterSlug));
  return catalog.prices.filter((p) => p.serviceSlug === entry.serviceSlug && p.planSlug === price.planSlug && meters.has(p.meterSlug));
}

/** The sellers' notes on those prices, as one line (undefined when none has one). */
export function priceNote(catalog: DiscoveryCatalog, entry: DiscoveredRoute): string | undefined {
  const notes = routePrices(catalog, entry).flatMap((p) => (p.description ? [p.description] : []));
  return notes.length ? notes.join('; ') : undefined;
}
