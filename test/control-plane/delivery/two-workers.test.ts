import pino from 'pino';
import t from 'tap';
import { openDatabase } from '../../../control-plane/db/client.js';
import { AccountWriteWorker } from '../../../control-plane/delivery/account-write-worker.js';
import { startAccountReceiver } from '../../helpers/account-receiver.js';
import { registerAgent } from '../../helpers/agents.js';
import { testProviders } from '../../helpers/database.js';
import { startPaidWorld } from '../../helpers/paid-world.js';

// Exactly once in effect: two control-planes (two workers, each with its own connection pool)
// on one database never deliver the same write at the same time; a write left mid-delivery by a
// worker that died is delivered again once its lease lapses, and not before.

const logger = pino({ level: 'silent' });

for (const provider of testProviders()) {
  t.test(`account writes with two control-planes, and a dead one, on ${provider}`, async (t) => {
    const { hub, db, url, rail, secretOf, offerPlan, becomeStateful } = await startPaidWorld(t, provider);
    const receiver = await startAccountReceiver(t, secretOf);
    await becomeStateful(receiver.url);
    const plan = {
      id: await offerPlan({ name: 'Trial', slug: 'trial', kind: 'free_trial', billingMode: 'subscription', verifiedEmailPolicy: 'off' }),
    };
    /** A free trial opened at the pay URL by a new agent: one account, one write. */
    const open = async () => {
      const agent = await registerAgent(hub, 'acme');
      const res = await fetch(url('/extend'), {
        method: 'POST',
        headers: { authorization: `Bearer ${agent.token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ planId: plan.id }),
      });
      return ((await res.json()) as { account: { accessId: string } }).account.accessId;
    };

    await t.test('two workers on one database: every write delivered, none twice', async (t) => {
      const accessIds = await Promise.all(Array.from({ length: 24 }, open));
      const second = await openDatabase(hub.cp.config.database, { poolSize: 5 });
      t.teardown(() => second.close());
      const a = new AccountWriteWorker(db, hub.cp.masterKey, { live: rail }, logger, { batch: 8 });
      const b = new AccountWriteWorker(second.db, hub.cp.masterKey, { live: rail }, logger, { batch: 8 });
      for (let round = 0; round < 6; round++) await Promise.all([a.runOnce(), b.runOnce(), a.runOnce(), b.runOnce()]);
      const writes = await db.accountWrite.findMany({ where: { accessId: { in: accessIds } } });
      t.same(new Set(writes.map((w) => w.status)), new Set(['applied']));
      t.same(
        writes.map((w) => w.attempts),
        writes.map(() => 1),
        'each taken once',
      );
      for (const accessId of accessIds) {
        t.equal(receiver.requests.filter((r) => r.requestId === `${accessId}:1`).length, 1, `${accessId} delivered once`);
      }
    });

    await t.test('a write left mid-delivery by a dead worker: taken again once its lease lapses', async (t) => {
      const accessId = await open();
      const worker = new AccountWriteWorker(db, hub.cp.masterKey, { live: rail }, logger);
      const key = { accessId_kind_stateVersion: { accessId, kind: 'write', stateVersion: 1 } };
      // As a control-plane killed while its request was out leaves the row.
      await db.accountWrite.update({
        where: key,
        data: { status: 'delivering', attempts: 1, claimedUntil: new Date(Date.now() + 60_000) },
      });
      await worker.runOnce();
      t.equal((await db.accountWrite.findUniqueOrThrow({ where: key })).status, 'delivering', 'not while the lease holds');
      t.equal(receiver.requests.filter((r) => r.requestId === `${accessId}:1`).length, 0);
      await worker.runOnce(new Date(Date.now() + 61_000));
      t.match(await db.accountWrite.findUniqueOrThrow({ where: key }), { status: 'applied', attempts: 2 });
      t.match(await receiver.store.get(accessId), { stateVersion: 1 });
    });
  });
}
