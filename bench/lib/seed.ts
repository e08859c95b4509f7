import { bootstrap } from '../../control-plane/bootstrap.js';
import { openDatabase } from '../../control-plane/db/client.js';
import { migrateDatabase } from '../../control-plane/db/migrate.js';
import { parseDatabaseUrl } from '../../shared/config.js';
import { newId } from '../../shared/ids.js';
import { sealSecret } from '../../shared/secret-box.js';
import { hashToken, newToken } from '../../shared/tokens.js';

/** Seeds a benchmark seller (with an active signing secret) and an agent; returns the agent token. */
export async function seedSeller(
  databaseUrl: string,
  masterKeyHex: string,
  slug: string,
  upstreamBaseUrl: string,
): Promise<{ agentToken: string }> {
  const database = parseDatabaseUrl(databaseUrl);
  await migrateDatabase(database);
  const { db, close } = await openDatabase(database);
  try {
    const { organizationId } = await bootstrap(db, { email: 'bench@example.com', organizationName: 'Benchmark' });
    const sellerId = newId('seller');
    await db.seller.create({ data: { id: sellerId, organizationId, name: slug, slug, upstreamBaseUrl } });
    await db.signingSecret.create({
      data: {
        id: newId('signingSecret'),
        sellerId,
        status: 'active',
        encryptedSecret: sealSecret(Buffer.from(masterKeyHex, 'hex'), newToken('signingSecret')),
      },
    });
    const agentToken = newToken('agent');
    await db.agent.create({ data: { id: newId('agent'), walletAddress: `0x${'be'.repeat(20)}`, tokenHash: hashToken(agentToken) } });
    return { agentToken };
  } finally {
    await close();
  }
}
