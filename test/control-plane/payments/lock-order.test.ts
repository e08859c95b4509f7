import t, { type Test } from 'tap';
import { countCalls } from '../../../control-plane/analytics/traffic-rollup.js';
import { openDatabase } from '../../../control-plane/db/client.js';
import { sqlOf } from '../../../control-plane/db/sql.js';
import { issuePaymentChallenge } from '../../../control-plane/payments/challenge.js';
import type { PaymentRail } from '../../../control-plane/payments/rail.js';
import { planStanding } from '../../../control-plane/storefront/plan-standing.js';
import { Prisma } from '../../../generated/prisma/sqlite/client.js';
import { newId, newRequestId } from '../../../shared/ids.js';
import { seedPricedService } from '../../helpers/catalog-seed.js';
import { createTestDatabase } from '../../helpers/database.js';

// A challenge for an identified agent's request is written while the proxy's batch may be storing
// that same request's record and counting the seller's calls. On PostgreSQL both wait on row
// locks, so they must take them in one order (analytics/traffic-rollup.ts › lock order); the
// other order deadlocked now and then under load, and the database aborted one of them.
t.test(
  'a challenge and the proxy’s record batch never deadlock',
  { skip: !process.env.HUB_TEST_PG_URL && 'HUB_TEST_PG_URL is not set' },
  async (t) => {
    const { db, database } = await createTestDatabase(t, 'postgresql');
    const batchWriter = await openDatabase(database, { poolSize: 2 });
    t.teardown(() => batchWriter.close());
    const watcher = await openDatabase(database, { poolSize: 1 });
    t.teardown(() => watcher.close());

    const organizationId = newId('organization');
    await db.organization.create({ data: { id: organizationId, name: 'Acme' } });
    const sellerId = newId('seller');
    await db.seller.create({
      data: {
        id: sellerId,
        organizationId,
        name: 'acme',
        slug: 'acme',
        upstreamBaseUrl: 'http://127.0.0.1:9',
        payToAddress: '0x00000000000000000000000000000000000000aa',
      },
    });
    await seedPricedService(db, { organizationId, sellerId, priceMicros: 10_000n });
    const wallet = '0x00000000000000000000000000000000000000bb';
    const agentId = newId('agent');
    await db.agent.create({ data: { id: agentId, walletAddress: wallet } });
    const rail = {
      name: 'usdc',
      network: 'eip155:31337',
      token: { address: '0x00000000000000000000000000000000000000cc', name: 'USD Coin', version: '2', decimals: 6, symbol: 'USDC' },
      facilitator: undefined as never,
      maxTimeoutSeconds: 300,
      readsChain: false,
    } satisfies PaymentRail;

    const waitingOnLocks = async () => {
      const [row] = await watcher.db.$queryRaw<{ n: number }[]>`
      SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'`;
      return row!.n;
    };

    /**
     * Holds the request's record as the proxy's batch does (stored first, counted last), and counts
     * only once the challenge waits for that record: the moment the old order deadlocked.
     */
    const challengeBesideBatch = async (t: Test, requestId: string) => {
      let challenge: ReturnType<typeof issuePaymentChallenge> | undefined;
      const batch = sqlOf(batchWriter.db).transaction(async (tx) => {
        await tx.run(Prisma.sql`INSERT INTO "RequestRecord" ("id", "sellerId", "method", "path", "sandbox", "lifecycle", "mode", "createdAt")
          VALUES (${requestId}, ${sellerId}, 'GET', '/search', false, 'forwarded', 'paid', ${new Date()}) ON CONFLICT ("id") DO NOTHING`);
        challenge = issuePaymentChallenge(
          db,
          { live: rail },
          {
            sellerId,
            requestId,
            agentId,
            buyerId: null,
            method: 'GET',
            pathAndQuery: '/search',
            bodyDigest: 'digest',
            serviceSlug: 'search',
            usage: [{ meterSlug: 'calls', quantity: 1 }],
            sandbox: false,
          },
          planStanding,
        );
        challenge.catch(() => {});
        for (let tries = 0; (await waitingOnLocks()) === 0; tries++) {
          if (tries > 200) throw new Error('the challenge never waited for the record');
          await new Promise((resolve) => setTimeout(resolve, 25));
        }
        await countCalls(tx, [{ sellerId, at: Date.now(), count: 1 }]);
      });
      const [batchDone, challenged] = await Promise.allSettled([
        batch,
        batch.then(
          () => challenge!,
          () => challenge!,
        ),
      ]);
      t.equal(batchDone.status, 'fulfilled', 'the batch committed');
      t.equal(challenged.status, 'fulfilled', 'the challenge was issued');
      const record = await db.requestRecord.findUniqueOrThrow({ where: { id: requestId } });
      t.equal(record.lifecycle, 'challenged', 'the record is the challenge’s');
      return challenged.status === 'fulfilled' ? challenged.value : undefined;
    };

    await t.test('a challenge', async (t) => {
      const issued = await challengeBesideBatch(t, newRequestId(true));
      t.match(issued, { kind: 'challenge', challenge: { amountUsd: '0.010000' } });
    });

    await t.test('a call paid from credit', async (t) => {
      // Seeded for speed: test/proxy/payments/x402-paid-call.test.ts earns this credit through the pay URL.
      await db.payerCredit.create({ data: { sellerId, payer: wallet, balanceMicros: 10_000n } });
      const issued = await challengeBesideBatch(t, newRequestId(true));
      t.match(issued, { kind: 'paid_from_credit', amountUsd: '0.010000' });
      t.equal((await db.payerCredit.findFirstOrThrow({ where: { sellerId, payer: wallet } })).balanceMicros, 0n, 'drawn');
    });

    const [day] = await db.sellerStat.findMany({ where: { sellerId, grain: 'day' } });
    t.match(day, { calls: 2, attempts: 2 }, 'both counts and both attempts were counted');
  },
);
