import { portOf } from '../../runtime/upstream-addresses.js';
import type { Db } from '../db/client.js';

/**
 * The hosts an organization's sellers own, which agentify may fetch pages from: each seller's
 * upstream host (at its port) and each custom hostname (at the default ports, where the public
 * reaches it). Only an upstream host may resolve to an internal address: the seller named it as
 * where its API runs; a custom hostname is public by definition, so an internal answer for one is
 * someone pointing hub at its own network.
 */
export type OwnedHost = { sellerId: string; mayBeInternal: boolean };

export type OwnedHosts = ReadonlyMap<string, OwnedHost>;

export async function ownedHostsOf(db: Db, organizationId: string): Promise<OwnedHosts> {
  const sellers = await db.seller.findMany({
    where: { organizationId },
    select: { id: true, upstreamBaseUrl: true, hostnames: { select: { hostname: true } } },
    orderBy: { createdAt: 'asc' },
  });
  const hosts = new Map<string, OwnedHost>();
  for (const seller of sellers) {
    for (const { hostname } of seller.hostnames) {
      for (const port of ['80', '443']) hosts.set(`${hostname}:${port}`, { sellerId: seller.id, mayBeInternal: false });
    }
  }
  // Upstreams last, so a host that is both keeps the upstream's allowance.
  for (const seller of sellers) {
    const upstream = new URL(seller.upstreamBaseUrl);
    hosts.set(hostKey(upstream), { sellerId: seller.id, mayBeInternal: true });
  }
  return hosts;
}

/** `hostname:port`, with the scheme's default port written out, so http://h and http://h:80 match. */
export function hostKey(url: URL): string {
  return `${url.hostname}:${portOf(url)}`;
}
