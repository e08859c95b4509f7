import type { PaySeller } from '../../shared/contract.js';
import { normalizeHost, slugFromPayHost } from '../../shared/pay-host.js';
import { openSecret } from '../../shared/secret-box.js';
import type { Db } from '../db/client.js';

/** The seller a pay host names: `{slug}.{payDomain}` first, then the custom hostnames. */
export async function sellerByHost(db: Db, masterKey: Buffer, payDomain: string, hostHeader: string): Promise<PaySeller | null> {
  const host = normalizeHost(hostHeader);
  if (!host) return null;
  const slug = slugFromPayHost(host, payDomain);
  const sellerId = slug
    ? (await db.seller.findUnique({ where: { slug }, select: { id: true } }))?.id
    : (await db.sellerHostname.findUnique({ where: { hostname: host }, select: { sellerId: true } }))?.sellerId;
  return sellerId ? paySeller(db, masterKey, sellerId) : null;
}

export async function paySeller(db: Db, masterKey: Buffer, sellerId: string): Promise<PaySeller | null> {
  const seller = await db.seller.findUnique({
    where: { id: sellerId },
    include: {
      hostnames: { select: { hostname: true } },
      signingSecrets: { where: { status: 'active' }, orderBy: [{ createdAt: 'desc' }, { id: 'desc' }] },
    },
  });
  if (!seller) return null;
  return {
    id: seller.id,
    organizationId: seller.organizationId,
    slug: seller.slug,
    name: seller.name,
    upstreamBaseUrl: seller.upstreamBaseUrl,
    sandbox: seller.sandbox,
    hostnames: seller.hostnames.map((h) => h.hostname),
    signingSecrets: seller.signingSecrets.map((s) => ({ kid: s.id, secret: openSecret(masterKey, s.encryptedSecret) })),
    updatedAt: seller.updatedAt.toISOString(),
  };
}
