import { bootstrap } from '../../control-plane/bootstrap.js';
import { openDatabase } from '../../control-plane/db/client.js';
import { migrateDatabase } from '../../control-plane/db/migrate.js';
import { parseDatabaseUrl } from '../../shared/config.js';
import { newId } from '../../shared/ids.js';
import { seedPricedService } from '../../test/helpers/catalog-seed.js';

export type UsageSeed = { apiKey: string; requestIds: string[]; serviceSlug: string; meterSlug: string };

/**
 * Seeds the usage benchmark: an organization with an all-scopes API key, one seller with a
 * service `forecast`, a meter `requests` priced at $0.000001 on a credit plan, and `agents`
 * agents that each hold an access with credit that never runs out and one forwarded request.
 */
export async function seedUsage(databaseUrl: string, agents: number): Promise<UsageSeed> {
  const database = parseDatabaseUrl(databaseUrl);
  await migrateDatabase(database);
  const { db, close } = await openDatabase(database);
  try {
    const { organizationId, apiKey } = await bootstrap(db, { email: 'bench@example.com', organizationName: 'Benchmark' });
    const sellerId = newId('seller');
    await db.seller.create({ data: { id: sellerId, organizationId, name: 'Bench', slug: 'bench', upstreamBaseUrl: 'http://127.0.0.1:9' } });
    const { planId } = await seedPricedService(db, {
      organizationId,
      sellerId,
      service: { slug: 'forecast', name: 'Forecast' },
      meter: { key: 'requests', unit: 'request' },
      plan: { slug: 'credits', name: 'Credits', billingMode: 'credit' },
      priceMicros: 1n,
    });

    const plenty = 10n ** 15n;
    const requestIds: string[] = [];
    for (let i = 0; i < agents; i++) {
      const agentId = newId('agent');
      await db.agent.create({ data: { id: agentId, walletAddress: `0x${i.toString(16).padStart(40, '0')}` } });
      await db.access.create({
        data: { id: newId('access'), sellerId, planId, agentId, status: 'active', creditGrantedMicros: plenty, balanceMicros: plenty },
      });
      const requestId = newId('request');
      await db.requestRecord.create({
        data: { id: requestId, sellerId, agentId, method: 'POST', path: '/forecast', lifecycle: 'forwarded' },
      });
      requestIds.push(requestId);
    }
    return { apiKey, requestIds, serviceSlug: 'forecast', meterSlug: 'requests' };
  } finally {
    await close();
  }
}
