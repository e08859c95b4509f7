import { bootstrap } from '../../control-plane/bootstrap.js';
import { openDatabase } from '../../control-plane/db/client.js';
import { migrateDatabase } from '../../control-plane/db/migrate.js';
import { parseDatabaseUrl } from '../../shared/config.js';
import { newId } from '../../shared/ids.js';
import { sealSecret } from '../../shared/secret-box.js';
import { hashToken, newToken } from '../../shared/tokens.js';
import { seedPricedService } from '../../test/helpers/catalog-seed.js';

/**
 * Seeds a benchmark seller (with an active signing secret) and an agent; with `paid`, the seller
 * takes payments to `payToAddress` for `search` / `calls` at `priceMicros` per call, with the x402
 * schemes `x402Schemes` (default `exact` only). Returns the
 * agent's token and the seller's signing key, which its upstream verifies hub's signatures with,
 * and an API key of the seller's organization.
 */
export async function seedSeller(
  databaseUrl: string,
  masterKeyHex: string,
  slug: string,
  upstreamBaseUrl: string,
  paid?: { payToAddress: string; priceMicros: bigint; x402Schemes?: string[] },
): Promise<{ agentToken: string; kid: string; secret: string; apiKey: string; sellerId: string }> {
  const database = parseDatabaseUrl(databaseUrl);
  await migrateDatabase(database);
  const { db, close } = await openDatabase(database);
  try {
    const { organizationId, apiKey } = await bootstrap(db, { email: 'bench@example.com', organizationName: 'Benchmark' });
    const sellerId = newId('seller');
    await db.seller.create({
      data: {
        id: sellerId,
        organizationId,
        name: slug,
        slug,
        upstreamBaseUrl,
        payToAddress: paid?.payToAddress ?? null,
        ...(paid?.x402Schemes ? { x402SchemesJson: JSON.stringify(paid.x402Schemes) } : {}),
      },
    });
    const kid = newId('signingSecret');
    const secret = newToken('signingSecret');
    await db.signingSecret.create({
      data: { id: kid, sellerId, status: 'active', encryptedSecret: sealSecret(Buffer.from(masterKeyHex, 'hex'), secret) },
    });
    if (paid) await seedPricedService(db, { organizationId, sellerId, priceMicros: paid.priceMicros });
    const agentToken = newToken('agent');
    await db.agent.create({ data: { id: newId('agent'), walletAddress: `0x${'be'.repeat(20)}`, tokenHash: hashToken(agentToken) } });
    return { agentToken, kid, secret, apiKey, sellerId };
  } finally {
    await close();
  }
}
