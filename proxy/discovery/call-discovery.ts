import { bazaarExtensions } from '../../shared/discovery/bazaar.js';
import { matchRoute } from '../../shared/discovery/route-match.js';
import type { ProxyServices } from '../context.js';

/**
 * What a 402 adds for x402's Bazaar when the call is of a route the seller declared; `briefExtensions`
 * is the same without the route's example, for a header the example would make too big.
 */
export type CallDiscovery = { extensions: Record<string, unknown>; briefExtensions: Record<string, unknown>; description?: string };

/**
 * Looked up beside the challenge (the catalog is the proxy's cached one): the declared route the
 * call is of, as the Bazaar extension and the resource's description. Discovery only describes,
 * so a catalog that cannot be read leaves the 402 without it rather than failing it.
 */
export async function callDiscovery(
  services: ProxyServices,
  sellerId: string,
  method: string,
  target: string,
): Promise<CallDiscovery | undefined> {
  const catalog = await services.catalog.discovery(sellerId).catch(() => null);
  if (!catalog) return undefined;
  const path = target.split('?', 1)[0]!;
  const entry = matchRoute(catalog.routes, method, path);
  if (!entry) return undefined;
  return {
    extensions: bazaarExtensions(entry.route, path),
    briefExtensions: bazaarExtensions(entry.route, path, false),
    ...(entry.route.description ? { description: entry.route.description } : {}),
  };
}
