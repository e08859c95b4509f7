import { ApiError } from '../../../shared/errors.js';
import type { Db } from '../../db/client.js';

type Tx = Pick<Db, 'sellerHostname'>;

/**
 * Custom hostnames must stay outside the pay domain: every name under it is already a seller's
 * `{slug}.{pay domain}` (or could become one), and the proxy resolves those by slug first.
 */
export function refuseHostnamesUnderPayDomain(hostnames: readonly string[], payDomain: string): void {
  const clash = hostnames.find((host) => host === payDomain || host.endsWith(`.${payDomain}`));
  if (clash)
    throw ApiError.validation(`hostnames: ${clash} is under the pay domain ${payDomain}; the seller's slug already names its host there`);
}

/** Makes `hostnames` the seller's whole set. A hostname serving another seller is `duplicate_hostname`. */
export async function replaceHostnames(tx: Tx, sellerId: string, hostnames: readonly string[]): Promise<void> {
  await tx.sellerHostname.deleteMany({ where: { sellerId, hostname: { notIn: [...hostnames] } } });
  const kept = await tx.sellerHostname.findMany({ where: { sellerId }, select: { hostname: true } });
  const existing = new Set(kept.map((h) => h.hostname));
  for (const hostname of hostnames) {
    if (!existing.has(hostname)) await tx.sellerHostname.create({ data: { hostname, sellerId } });
  }
}
