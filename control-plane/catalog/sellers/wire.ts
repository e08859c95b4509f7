import type { z } from 'zod';
import type { Seller } from '../../../generated/prisma/sqlite/client.js';
import { payHostOf } from '../../../shared/pay-host.js';
import type { seller } from '../../../shared/schemas/sellers.js';

/** What to load with a seller to put it on the wire. */
export const sellerWithHostnames = { hostnames: { select: { hostname: true }, orderBy: { hostname: 'asc' } } } as const;

export function toSellerWire(row: Seller & { hostnames: { hostname: string }[] }, payDomain: string): z.infer<typeof seller> {
  return {
    id: row.id,
    name: row.name,
    slug: row.slug,
    payHost: payHostOf(row.slug, payDomain),
    upstreamBaseUrl: row.upstreamBaseUrl,
    payToAddress: row.payToAddress,
    networks: JSON.parse(row.networksJson) as string[],
    hostnames: row.hostnames.map((h) => h.hostname),
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
  };
}
