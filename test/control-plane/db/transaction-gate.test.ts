import t from 'tap';
import { createTestDatabase, testProviders } from '../../helpers/database.js';

// A transaction that awaits between its statements must neither take in nor show the statements
// other requests make meanwhile: on SQLite they share its one connection.

const names = async (db: Awaited<ReturnType<typeof createTestDatabase>>['db']) =>
  (await db.organization.findMany({ select: { id: true, name: true }, orderBy: { id: 'asc' } })).map((o) => `${o.id}:${o.name}`);
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

for (const provider of testProviders()) {
  t.test(`transactions on ${provider}`, async (t) => {
    const { db } = await createTestDatabase(t, provider);
    await db.organization.create({ data: { id: 'o1', name: 'before' } });

    await t.test('a write made meanwhile outlives a transaction that rolls back', async (t) => {
      const rolledBack = db
        .$transaction(async (tx) => {
          await tx.organization.update({ where: { id: 'o1' }, data: { name: 'uncommitted' } });
          await pause(100);
          throw new Error('roll back');
        })
        .catch((err: Error) => err.message);
      await pause(20);
      const seen = await db.organization.findUnique({ where: { id: 'o1' }, select: { name: true } });
      await db.organization.create({ data: { id: 'o2', name: 'meanwhile' } });
      t.equal(await rolledBack, 'roll back');
      t.equal(seen?.name, 'before', 'nothing uncommitted was read');
      t.same(await names(db), ['o1:before', 'o2:meanwhile'], 'the write made meanwhile stays');
    });

    await t.test('transactions started together each commit their own writes', async (t) => {
      await Promise.all(
        ['a', 'b', 'c'].map((id) =>
          db.$transaction(async (tx) => {
            await tx.organization.create({ data: { id: `t-${id}`, name: 'one' } });
            await pause(10);
            await tx.organization.update({ where: { id: `t-${id}` }, data: { name: 'two' } });
          }),
        ),
      );
      const failing = db
        .$transaction(async (tx) => {
          await tx.organization.create({ data: { id: 't-d', name: 'one' } });
          await pause(10);
          throw new Error('no');
        })
        .catch(() => 'rolled back');
      const [, written] = await Promise.all([failing, db.organization.create({ data: { id: 't-e', name: 'alone' } })]);
      t.equal(written.id, 't-e');
      t.same(await names(db), ['o1:before', 'o2:meanwhile', 't-a:two', 't-b:two', 't-c:two', 't-e:alone']);
    });
  });
}
