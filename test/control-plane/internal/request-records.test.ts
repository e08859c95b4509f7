import t from 'tap';
import { recordRequests } from '../../../control-plane/internal/request-records.js';
import type { RequestRecordInput } from '../../../shared/contract.js';
import { newId } from '../../../shared/ids.js';
import { createTestDatabase, testProviders } from '../../helpers/database.js';

// The proxy's batches of request records: identified requests stored up front and completed
// later, anonymous calls counted per seller and minute (RequestTally).
for (const provider of testProviders()) {
  t.test(provider, async (t) => {
    const { db } = await createTestDatabase(t, provider);
    const organizationId = newId('organization');
    await db.organization.create({ data: { id: organizationId, name: 'Acme' } });
    const seller = async () => {
      const id = newId('seller');
      await db.seller.create({ data: { id, organizationId, name: id, slug: id.toLowerCase(), upstreamBaseUrl: 'http://127.0.0.1:9' } });
      return id;
    };
    const sellerId = await seller();
    const minute = '2026-11-21T10:15:00.000Z';
    const record = (over: Partial<RequestRecordInput> = {}): RequestRecordInput => ({
      id: newId('request'),
      sellerId,
      agentId: null,
      method: 'GET',
      path: '/items?q=1',
      sandbox: false,
      lifecycle: 'forwarded',
      mode: 'paid',
      createdAt: new Date().toISOString(),
      ...over,
    });

    await t.test('records are created in one batch and completed in the next', async (t) => {
      const rows = Array.from({ length: 3 }, () => record());
      t.equal(await recordRequests(db, { created: rows, completed: [], tallies: [] }), 3);
      const completedAt = '2026-11-21T10:15:30.123Z';
      await recordRequests(db, {
        created: [],
        completed: [
          { id: rows[0]!.id, lifecycle: 'delivered', upstreamStatus: 200, completedAt },
          { id: rows[1]!.id, lifecycle: 'failed', upstreamStatus: null, completedAt },
          { id: newId('request'), lifecycle: 'delivered', upstreamStatus: 200, completedAt },
        ],
        tallies: [],
      });
      const stored = await db.requestRecord.findMany({ where: { id: { in: rows.map((r) => r.id) } } });
      const byId = new Map(stored.map((r) => [r.id, r]));
      t.match(byId.get(rows[0]!.id), {
        lifecycle: 'delivered',
        upstreamStatus: 200,
        completedAt: new Date(completedAt),
        path: '/items?q=1',
      });
      t.match(byId.get(rows[1]!.id), { lifecycle: 'failed', upstreamStatus: null, completedAt: new Date(completedAt) });
      t.match(byId.get(rows[2]!.id), { lifecycle: 'forwarded', completedAt: null }, 'a record not in the batch is untouched');
    });

    await t.test('tallies add up within a batch and across batches, per key', async (t) => {
      const tally = (count: number, over: object = {}) => ({
        sellerId,
        minute,
        sandbox: false,
        lifecycle: 'delivered' as const,
        count,
        ...over,
      });
      await recordRequests(db, { created: [], completed: [], tallies: [tally(5), tally(2), tally(1, { lifecycle: 'failed' })] });
      await recordRequests(db, {
        created: [],
        completed: [],
        tallies: [tally(10), tally(4, { sandbox: true }), tally(3, { minute: '2026-11-21T10:16:00.000Z' })],
      });
      const rows = await db.requestTally.findMany({
        where: { sellerId },
        orderBy: [{ minute: 'asc' }, { lifecycle: 'asc' }, { sandbox: 'asc' }],
      });
      t.same(
        rows.map((r) => [r.minute.toISOString(), r.lifecycle, r.sandbox, r.count]),
        [
          [minute, 'delivered', false, 17],
          [minute, 'delivered', true, 4],
          [minute, 'failed', false, 1],
          ['2026-11-21T10:16:00.000Z', 'delivered', false, 3],
        ],
      );
    });

    await t.test('rows of a seller deleted meanwhile are dropped, the rest of the batch is kept', async (t) => {
      const gone = await seller();
      await db.seller.delete({ where: { id: gone } });
      const kept = record();
      const stored = await recordRequests(db, {
        created: [kept, record({ sellerId: gone })],
        completed: [],
        tallies: [{ sellerId: gone, minute, sandbox: false, lifecycle: 'delivered', count: 1 }],
      });
      t.equal(stored, 1);
      t.ok(await db.requestRecord.findUnique({ where: { id: kept.id } }));
      t.equal(await db.requestTally.count({ where: { sellerId: gone } }), 0);
    });

    await t.test('a large batch is split into statements below the parameter limits', async (t) => {
      const other = await seller();
      const rows = Array.from({ length: 1_000 }, () => record({ sellerId: other }));
      await recordRequests(db, { created: rows, completed: [], tallies: [] });
      const completedAt = new Date().toISOString();
      await recordRequests(db, {
        created: [],
        completed: rows.map((r) => ({ id: r.id, lifecycle: 'delivered' as const, upstreamStatus: 204, completedAt })),
        tallies: [],
      });
      t.equal(await db.requestRecord.count({ where: { sellerId: other, lifecycle: 'delivered', upstreamStatus: 204 } }), 1_000);
    });
  });
}
