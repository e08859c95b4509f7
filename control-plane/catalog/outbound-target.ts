import { type AddressRefusal, hostnameOf, upstreamAddressesOf } from '../../runtime/upstream-addresses.js';
import type { HubConfig } from '../../shared/config.js';
import { ApiError } from '../../shared/errors.js';
import type { Db } from '../db/client.js';

/**
 * A URL a seller gives hub to connect to (its upstream, its account endpoint), refused when the
 * address policy forbids it (runtime/upstream-addresses.ts) or when it names a custom hostname
 * this hub serves, which would lead back to the proxy: 422 `upstream_not_allowed`, the field
 * named. Checked when the URL is stored; the proxy checks every connection again.
 */
export async function refuseForbiddenTarget(
  services: { db: Pick<Db, 'sellerHostname'>; config: HubConfig },
  field: 'upstreamBaseUrl' | 'accessEndpointUrl',
  value: string,
  /** Custom hostnames being given in the same request. */
  hostnames: readonly string[] = [],
): Promise<void> {
  const url = new URL(value);
  const refusal = (await upstreamAddressesOf(services.config).urlRefusal(url)) ?? (await servedHostname(services.db, url, hostnames));
  if (!refusal) return;
  const setting = refusal.kind === 'private' ? '; this hub connects only to public addresses (HUB_PRIVATE_UPSTREAMS=off)' : '';
  throw new ApiError('upstream_not_allowed', `${field}: ${refusal.reason}${setting}.`);
}

async function servedHostname(db: Pick<Db, 'sellerHostname'>, url: URL, hostnames: readonly string[]): Promise<AddressRefusal | undefined> {
  const host = hostnameOf(url);
  const served =
    hostnames.includes(host) || (await db.sellerHostname.findUnique({ where: { hostname: host }, select: { hostname: true } }));
  return served ? { kind: 'loop', reason: `${host} is a custom hostname this hub serves, so requests would loop through it` } : undefined;
}
