import t from 'tap';
import { bindingsAndProviders, usageWorld } from '../../helpers/usage-world.js';

// No double spend and exactly-once recording under concurrency (issue 6, Done means), over real
// HTTP on loopback, on each database.
for (const [provider, binding] of bindingsAndProviders()) {
  t.test(`usage under concurrency on ${provider}, ${binding} binding`, async (t) => {
    const w = await usageWorld(t, provider, binding);
    const requests = (quantity: number) => [{ meterSlug: 'requests', quantity }];
    const statuses = (replies: { status: number }[]) =>
      replies.reduce<Record<number, number>>((n, r) => ({ ...n, [r.status]: (n[r.status] ?? 0) + 1 }), {});

    await t.test('100 parallel reports racing for the last credit: exactly the affordable number succeed', async (t) => {
      // 10 included requests, then $0.001 each from $0.027: 37 one-request reports fit.
      const agentId = await w.agent();
      const accessId = await w.access({ agentId, balanceMicros: 27_000n });
      const requestId = await w.request({ agentId });
      const replies = await Promise.all(
        Array.from({ length: 100 }, (_, i) =>
          w.report({ idempotencyKey: `race-${i}`, zcRequestId: requestId, serviceSlug: 'forecast', usage: requests(1) }),
        ),
      );
      t.same(statuses(replies), { 200: 37, 402: 63 });
      t.ok(replies.filter((r) => r.status === 402).every((r) => r.body.error === 'usage_exhausted'));
      t.equal(await w.balance(accessId), 0n, 'every micro-dollar spent, none twice, never below zero');
      t.equal(await w.db.usageEvent.count({ where: { requestId } }), 37);
      t.match(await w.db.accessMeterUsage.findMany({ where: { accessId } }), [{ unitsUsed: 10n }]);
      const spent = (await w.events(requestId)).reduce((sum, e) => sum + e.costMicros, 0n);
      t.equal(spent, 27_000n, 'the events account for the credit exactly');
    });

    await t.test('parallel reports racing for credit units, then credit: the pool is drawn exactly once', async (t) => {
      // The units plan: 2 included requests, 20 credit units, then $0.001 each from $0.005: 27 fit.
      const agentId = await w.agent();
      const accessId = await w.access({ agentId, planId: w.plans.units, balanceMicros: 5_000n });
      const requestId = await w.request({ agentId });
      const replies = await Promise.all(
        Array.from({ length: 60 }, (_, i) =>
          w.report({ idempotencyKey: `units-${i}`, zcRequestId: requestId, serviceSlug: 'forecast', usage: requests(1) }),
        ),
      );
      t.same(statuses(replies), { 200: 27, 402: 33 });
      t.equal(await w.balance(accessId), 0n);
      t.match(await w.db.accessCreditUnitsUsage.findMany({ where: { accessId } }), [{ unitsUsed: 20n }]);
      const items = (await w.events(requestId)).flatMap((e) => e.items);
      t.equal(
        items.reduce((sum, i) => sum + i.creditUnits, 0n),
        20n,
        'the events account for every unit',
      );
    });

    await t.test('50 parallel duplicates of one key: exactly one event', async (t) => {
      const agentId = await w.agent();
      const accessId = await w.access({ agentId, balanceMicros: 1_000_000n });
      const requestId = await w.request({ agentId });
      const body = { idempotencyKey: 'once', zcRequestId: requestId, serviceSlug: 'forecast', usage: requests(15) };
      const replies = await Promise.all(Array.from({ length: 50 }, () => w.report(body)));
      t.same(statuses(replies), { 200: 50 });
      t.equal(replies.filter((r) => r.body.duplicate === false).length, 1, 'one recorded it');
      t.equal(new Set(replies.map((r) => r.body.id)).size, 1, 'all answer with its id');
      t.equal(await w.db.usageEvent.count({ where: { requestId } }), 1);
      t.equal(await w.balance(accessId), 1_000_000n - 5_000n, 'burned once');
    });

    await t.test('parallel free-mode reports of one buyer’s agents share its pool exactly', async (t) => {
      const owner = await w.buyer();
      const agents = [await w.agent({ buyerId: owner }), await w.agent({ buyerId: owner })];
      const ids = await Promise.all(
        Array.from({ length: 20 }, (_, i) => w.request({ agentId: agents[i % 2]!, buyerId: owner, mode: 'free' })),
      );
      const replies = await Promise.all(
        ids.map((zcRequestId, i) => w.report({ idempotencyKey: `free-${i}`, zcRequestId, serviceSlug: 'forecast', usage: requests(1) })),
      );
      t.same(statuses(replies), { 200: 5, 402: 15 });
      t.match(await w.db.includedUnitsUsage.findMany({ where: { buyerId: owner } }), [{ unitsUsed: 5n }]);
    });

    await t.test('racing reports spread over two accesses use both, and no more', async (t) => {
      const owner = await w.buyer();
      const agentId = await w.agent({ buyerId: owner });
      const own = await w.access({ agentId, balanceMicros: 5_000n });
      const shared = await w.access({ agentId: await w.agent({ buyerId: owner }), buyerId: owner, balanceMicros: 5_000n });
      const requestId = await w.request({ agentId, buyerId: owner });
      const replies = await Promise.all(
        Array.from({ length: 60 }, (_, i) =>
          w.report({ idempotencyKey: `two-${i}`, zcRequestId: requestId, serviceSlug: 'forecast', usage: requests(1) }),
        ),
      );
      t.same(statuses(replies), { 200: 30, 402: 30 }, '15 + 15 fit');
      t.equal(await w.balance(own), 0n);
      t.equal(await w.balance(shared), 0n);
    });
  });
}
