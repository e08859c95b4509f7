import type { PaySeller, SellerManifest } from '../../shared/contract.js';
import { JWE_SUITE, JWKS_PATH, type PublicEncryptionJwk, REPLY_JWK_PARAM } from '../../shared/encryption/suite.js';
import { formatUsd } from '../../shared/money.js';
import { normalizeHost, slugFromPayHost } from '../../shared/pay-host.js';
import { openSecret } from '../../shared/secret-box.js';
import type { Db } from '../db/client.js';

/**
 * What the proxy reads about sellers: the seller a pay host names (with its signing secrets
 * opened), the pay URL's manifest, and which sellers changed since the proxy last looked.
 */

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
      encryptionKeys: { where: { status: 'active' }, orderBy: [{ createdAt: 'desc' }, { id: 'desc' }] },
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
    encryptionKeys: seller.encryptionKeys.map((k) => {
      const { x, y } = JSON.parse(k.publicJwk) as PublicEncryptionJwk;
      return { kid: k.id, x, y, d: openSecret(masterKey, k.encryptedPrivateKey) };
    }),
    updatedAt: seller.updatedAt.toISOString(),
  };
}

/** `GET /manifest.json` on the pay URL: the seller's plans with their per-meter prices. */
export async function sellerManifest(db: Db, sellerId: string): Promise<SellerManifest | null> {
  const seller = await db.seller.findUnique({
    where: { id: sellerId },
    include: {
      encryptionKeys: { where: { status: 'active' }, orderBy: [{ createdAt: 'desc' }, { id: 'desc' }] },
      services: {
        orderBy: { slug: 'asc' },
        include: { plans: { orderBy: { slug: 'asc' }, include: { prices: { include: { meter: true }, orderBy: { createdAt: 'asc' } } } } },
      },
    },
  });
  if (!seller) return null;
  return {
    seller: { id: seller.id, slug: seller.slug, name: seller.name },
    plans: seller.services.flatMap((service) =>
      service.plans.map((plan) => ({
        id: plan.id,
        slug: plan.slug,
        name: plan.name,
        serviceSlug: service.slug,
        kind: plan.kind,
        billingMode: plan.billingMode,
        interval: plan.interval,
        // Pay-as-you-go plans are paid per call, never bought (payg_not_purchasable).
        purchasable: plan.billingMode !== 'payg',
        basePriceUsd: formatUsd(plan.basePriceMicros),
        includedCreditUsd: formatUsd(plan.includedCreditMicros),
        includedCreditUnits: plan.includedCreditUnits,
        includedCreditUnitLabel: plan.includedCreditUnitLabel,
        minimumPurchaseUsd: formatUsd(plan.minimumPurchaseMicros),
        verifiedEmailPolicy: plan.verifiedEmailPolicy,
        maxClaims: plan.maxClaims,
        prices: plan.prices.map((p) => ({
          meterSlug: p.meter.key,
          unit: p.meter.unit,
          priceUsd: formatUsd(p.priceMicros),
          unitSize: p.unitSize,
          includedUnits: p.includedUnits,
          defaultMaxQuantity: p.defaultMaxQuantity,
        })),
      })),
    ),
    encryption: seller.encryptionKeys.length
      ? {
          alg: JWE_SUITE.alg,
          enc: JWE_SUITE.enc,
          replyJwkParameter: REPLY_JWK_PARAM,
          jwksPath: JWKS_PATH,
          jwks: { keys: seller.encryptionKeys.map((k) => JSON.parse(k.publicJwk) as PublicEncryptionJwk) },
        }
      : null,
  };
}

/**
 * Sellers whose catalog changed at or after `since` (ISO time). The proxy polls this to drop
 * stale cache entries; `now` is the control-plane's clock, to pass back as the next `since`
 * (a small overlap keeps a write committed during the query from being missed).
 */
export async function sellersChangedSince(db: Db, since: string | null): Promise<{ now: string; sellerIds: string[] }> {
  const now = new Date();
  if (!since) return { now: now.toISOString(), sellerIds: [] };
  const from = new Date(new Date(since).getTime() - 2_000);
  const rows = await db.seller.findMany({ where: { updatedAt: { gte: from } }, select: { id: true } });
  return { now: now.toISOString(), sellerIds: rows.map((r) => r.id) };
}
