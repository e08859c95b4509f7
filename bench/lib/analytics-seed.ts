import { writePageViews } from '../../control-plane/analytics/page-view-rollup.js';
import { countAttempt, countTransaction } from '../../control-plane/analytics/traffic-rollup.js';
import { bootstrap } from '../../control-plane/bootstrap.js';
import { openDatabase } from '../../control-plane/db/client.js';
import { migrateDatabase } from '../../control-plane/db/migrate.js';
import { sqlOf } from '../../control-plane/db/sql.js';
import { recordRequests } from '../../control-plane/internal/request-records.js';
import type { PageViewRow } from '../../control-plane/page-views/sink.js';
import { Prisma } from '../../generated/prisma/sqlite/client.js';
import { parseDatabaseUrl } from '../../shared/config.js';
import type { RequestRecordInput } from '../../shared/contract.js';
import { newId } from '../../shared/ids.js';
import { seedPricedService } from '../../test/helpers/catalog-seed.js';

export type AnalyticsSeed = { apiKey: string; sellerId: string; seconds: { requests: number; payments: number; views: number } };
export type AnalyticsLoad = { requests: number; payments: number; views: number; days: number };

const DAY_MS = 86_400_000;
const PATHS = Array.from({ length: 300 }, (_, i) => `/docs/page-${i}`);
const COUNTRIES = ['US', 'DE', 'FR', 'GB', 'JP', 'IN', 'BR', 'CA', 'NL', 'SE', 'KR', 'AU'];
const CLASSES = ['human', 'human', 'human', 'agent', 'crawler', 'unknown'];

/**
 * Loads a year of one seller's traffic through the writers the product uses, oldest first as it
 * would arrive: request records through `recordRequests` (the proxy's batches), payments as
 * attempts counted by `countAttempt` and, for nine in ten, settled and counted by
 * `countTransaction`, page views through `writePageViews` (the ingestion sink's batches).
 */
export async function seedAnalytics(databaseUrl: string, load: AnalyticsLoad, log: (line: string) => void): Promise<AnalyticsSeed> {
  const database = parseDatabaseUrl(databaseUrl);
  await migrateDatabase(database);
  const { db, provider, close } = await openDatabase(database);
  try {
    const { organizationId, apiKey } = await bootstrap(db, { email: 'bench@example.com', organizationName: 'Benchmark' });
    const sellerId = newId('seller');
    await db.seller.create({
      data: {
        id: sellerId,
        organizationId,
        name: 'Bench',
        slug: 'bench',
        upstreamBaseUrl: 'http://127.0.0.1:9',
        payToAddress: `0x${'2'.repeat(40)}`,
      },
    });
    const { serviceId, planId } = await seedPricedService(db, { organizationId, sellerId, priceMicros: 10_000n });
    const start = Date.now() - load.days * DAY_MS;
    const at = (i: number, of: number) => new Date(start + Math.floor((i / of) * load.days * DAY_MS));
    const seconds = { requests: 0, payments: 0, views: 0 };

    let began = performance.now();
    for (let i = 0; i < load.requests; i += 5_000) {
      const created: RequestRecordInput[] = [];
      for (let j = i; j < Math.min(i + 5_000, load.requests); j++) {
        const when = at(j, load.requests).toISOString();
        created.push({
          id: newId('request'),
          sellerId,
          serviceId,
          agentId: null,
          buyerId: null,
          method: 'GET',
          path: PATHS[j % PATHS.length]!,
          sandbox: false,
          lifecycle: 'delivered',
          mode: 'paid',
          upstreamStatus: 200,
          createdAt: when,
          completedAt: when,
        });
      }
      await recordRequests(db, { created, completed: [], tallies: [] });
      if (i % 200_000 === 0) log(`  requests ${i.toLocaleString('en-US')}`);
    }
    seconds.requests = (performance.now() - began) / 1000;

    began = performance.now();
    for (let i = 0; i < load.payments; i += 500) {
      const batch = Array.from({ length: Math.min(500, load.payments - i) }, (_, k) => {
        const n = i + k;
        return {
          id: newId('paymentAttempt'),
          createdAt: at(n, load.payments),
          settled: n % 10 !== 0,
          payer: `0x${(n % 20_000).toString(16).padStart(40, '0')}`,
        };
      });
      const rows = batch.map(
        (p) =>
          Prisma.sql`(${p.id}, ${organizationId}, ${sellerId}, ${serviceId}, ${planId}, ${newId('request')}, 'call', 'GET', '/', '', 10000, 10000, ${p.settled ? 'settled' : 'challenge_created'}, ${p.settled ? p.payer : null}, ${p.createdAt})`,
      );
      await sqlOf(db).transaction(async (tx) => {
        await tx.run(
          Prisma.sql`INSERT INTO "PaymentAttempt" ("id", "organizationId", "sellerId", "serviceId", "planId", "requestId", "kind", "method", "pathAndQuery", "bodyDigest", "amountMicros", "chargedMicros", "status", "payer", "createdAt") VALUES ${Prisma.join(rows)}`,
        );
        for (const p of batch) {
          await tx.run(countAttempt(sellerId, p.createdAt));
          if (p.settled) await countTransaction(tx, { sellerId, createdAt: p.createdAt, chargedMicros: 10_000n, payer: p.payer });
        }
      });
    }
    seconds.payments = (performance.now() - began) / 1000;
    log(`  payments ${load.payments.toLocaleString('en-US')}`);

    began = performance.now();
    for (let i = 0; i < load.views; i += 2_000) {
      const rows: PageViewRow[] = [];
      for (let j = i; j < Math.min(i + 2_000, load.views); j++) {
        rows.push({
          id: newId('pageView'),
          organizationId,
          sellerId,
          // A long tail: the first paths are the most viewed.
          path: PATHS[Math.floor((((j * 7919) % 1000) ** 2 / 1000 ** 2) * PATHS.length)]!,
          status: 200,
          durationMs: null,
          capturedAt: null,
          journeyId: null,
          viewerId: `v${j % 5000}`,
          viewerClass: CLASSES[j % CLASSES.length]!,
          acceptsMarkdown: j % 7 === 0,
          country: COUNTRIES[j % COUNTRIES.length]!,
          referrerHost: j % 3 === 0 ? null : `ref-${j % 40}.example`,
          createdAt: at(j, load.views),
        });
      }
      await writePageViews(db, rows);
      if (i % 200_000 === 0) log(`  page views ${i.toLocaleString('en-US')}`);
    }
    seconds.views = (performance.now() - began) / 1000;
    // PostgreSQL plans from table statistics, which a bulk load leaves stale until autovacuum
    // analyzes the tables (within minutes in service); measured right after the load, ask now.
    if (provider === 'postgresql') await db.$executeRawUnsafe('ANALYZE');
    return { apiKey, sellerId, seconds };
  } finally {
    await close();
  }
}
