import { ApiError } from '../../shared/errors.js';
import type { Db } from '../db/client.js';

/**
 * The origins (scheme, host, port) an organization's sellers own, which agentify may fetch pages
 * from: each seller's upstream at its own scheme and port, and each custom hostname over http at
 * 80 and https at 443, where the public reaches it. Only an upstream host may resolve to an
 * internal address: the seller named it as where its API runs; a custom hostname is public by
 * definition, so an internal answer for one is someone pointing hub at its own network.
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
      for (const origin of [`http://${hostname}:80`, `https://${hostname}:443`]) {
        hosts.set(origin, { sellerId: seller.id, mayBeInternal: false });
      }
    }
  }
  // Upstreams last, so a host that is both keeps the upstream's allowance.
  for (const seller of sellers) {
    hosts.set(originKey(new URL(seller.upstreamBaseUrl)), { sellerId: seller.id, mayBeInternal: true });
  }
  return hosts;
}

/**
 * The seller owning the origin of `url`: the page asked for, or a hop of the redirects from
 * `askedFor`. A redirect is followed on the host first asked for only, to an origin owned there
 * (http to https on a custom hostname, say); to any other host, even one of the organization's,
 * it is refused: the caller asked for a page of that host, and may ask for the other one itself.
 */
export function ownerOf(hosts: OwnedHosts, url: URL, askedFor?: URL): OwnedHost {
  if (askedFor && url.hostname !== askedFor.hostname) {
    throw new ApiError(
      'page_host_not_owned',
      `The page redirects to ${url.host}; redirects are followed on the host asked for only (ask for ${url.href} itself).`,
    );
  }
  const owner = hosts.get(originKey(url));
  if (owner) return owner;
  if (askedFor) {
    throw new ApiError(
      'page_host_not_owned',
      `The page redirects to ${url.protocol}//${url.host}, which this organization’s sellers do not own.`,
    );
  }
  const other = url.protocol === 'https:' ? 'http:' : 'https:';
  throw new ApiError(
    'page_host_not_owned',
    hosts.has(originKey(url, other))
      ? `This organization’s sellers own ${url.host} over ${other.slice(0, -1)}, not ${url.protocol.slice(0, -1)}.`
      : `${url.host} is neither an upstream host nor a custom hostname of this organization’s sellers.`,
  );
}

/** `scheme://hostname:port`, the default port written out, so http://h and http://h:80 match. */
function originKey(url: URL, protocol = url.protocol): string {
  return `${protocol}//${url.hostname}:${url.port || (protocol === 'https:' ? '443' : '80')}`;
}
