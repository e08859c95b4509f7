import t from 'tap';
import { attemptsInTurn } from '../../../../control-plane/payments/settlement/in-turn.js';
import { newId } from '../../../../shared/ids.js';
import { createTestDatabase, testProviders } from '../../../helpers/database.js';

/**
 * The pending loop's pages go round: attempts that fail on every pass never keep the loop from the
 * ones behind them. Rows are written straight in, as this is the pager's own test; the pending
 * loop reaches these statuses through the pay URL in held-purchases and pending-settlement tests.
 */
for (const provider of testProviders()) {
  t.test(`pending attempts are taken in turn on ${provider}`, async (t) => {
    const { db } = await createTestDatabase(t, provider);
    const organizationId = newId('organization');
    await db.organization.create({ data: { id: organizationId, name: 'Acme' } });
    const sellerId = newId('seller');
    await db.seller.create({
      data: { id: sellerId, organizationId, name: 'Acme', slug: `acme-${provider}`, upstreamBaseUrl: 'http://127.0.0.1:9' },
    });
    const base = Date.now() - 60_000;
    const add = async (status: string, verifiedAt: number) => {
      const id = newId('paymentAttempt');
      await db.paymentAttempt.create({
        data: {
          id,
          organizationId,
          sellerId,
          requestId: newId('request'),
          kind: 'purchase',
          method: 'POST',
          pathAndQuery: '/extend',
          bodyDigest: 'digest',
          amountMicros: 1_000n,
          status,
          verifiedAt: new Date(verifiedAt),
        },
      });
      return id;
    };
    // Two share a time: the id orders them.
    const ids = [
      await add('holding', base),
      await add('releasing', base + 1),
      await add('holding', base + 1),
      await add('holding', base + 2),
    ];
    await add('reserved', base);
    const byTime = [ids[0]!, ...[ids[1]!, ids[2]!].sort(), ids[3]!];
    const where = { status: { in: ['holding', 'releasing'] }, verifiedAt: { lt: new Date() } };
    const page = async (pass = 'holds') => (await attemptsInTurn(db, pass, where, 2)).map((a) => a.id);

    t.same(await page(), byTime.slice(0, 2), 'the oldest first');
    t.same(await page(), byTime.slice(2, 4), 'then on from there');
    t.same(await page(), [], 'past the end');
    const older = await add('holding', base - 1);
    t.same(await page(), [older, byTime[0]], 'then from the start again, with what came since');
    t.same(await page('settlements'), [older, byTime[0]], 'each pass keeps its own place');
  });
}
