import t from 'tap';
import { bigintOf, booleanOf, dateOf, dateOrNull, jsonRows, sqlOf } from '../../../control-plane/db/sql.js';
import { Prisma } from '../../../generated/prisma/sqlite/client.js';
import { createTestDatabase, testProviders } from '../../helpers/database.js';

// The lane a paid call's statements take beside the ORM (control-plane/db/sql.ts): what one
// writes the other reads the same, a transaction is all or nothing, and on SQLite's one shared
// connection neither runs inside the other's transaction.

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
type OrgRow = { id: string; name: string; createdAt: unknown };

for (const provider of testProviders()) {
  t.test(`the SQL lane on ${provider}`, async (t) => {
    const { db } = await createTestDatabase(t, provider);
    const sql = sqlOf(db);
    t.equal(sql.provider, provider);
    await db.organization.create({ data: { id: 'org_1', name: 'Acme' } });
    await db.seller.create({
      data: { id: 'sel_1', organizationId: 'org_1', name: 'acme', slug: 'acme', upstreamBaseUrl: 'http://127.0.0.1:9', sandbox: true },
    });

    await t.test('reads what the ORM wrote', async (t) => {
      const seller = await db.seller.findUniqueOrThrow({ where: { id: 'sel_1' } });
      const row = await sql.get<{ sandbox: unknown; salesEnabled: unknown; createdAt: unknown; claimedAt?: unknown }>(
        Prisma.sql`SELECT "sandbox", "salesEnabled", "createdAt" FROM "Seller" WHERE "id" = ${'sel_1'}`,
      );
      t.equal(booleanOf(row?.sandbox), true);
      t.equal(booleanOf(row?.salesEnabled), false);
      t.same(dateOf(row?.createdAt), seller.createdAt, 'the same instant, to the millisecond');
      t.equal(await sql.get(Prisma.sql`SELECT "id" FROM "Seller" WHERE "id" = ${'nobody'}`), undefined);
    });

    await t.test('the ORM reads what it wrote', async (t) => {
      const huge = 2n ** 62n + 7n;
      const at = new Date('2026-11-25T23:59:59.123Z');
      const changed = await sql.run(Prisma.sql`INSERT INTO "PayerCredit" ("sellerId", "payer", "balanceMicros", "updatedAt")
        VALUES (${'sel_1'}, ${'0xabc'}, ${huge}, ${at})`);
      t.equal(changed, 1);
      t.match(await db.payerCredit.findUniqueOrThrow({ where: { sellerId_payer: { sellerId: 'sel_1', payer: '0xabc' } } }), {
        balanceMicros: huge,
        updatedAt: at,
      });
      const [read] = await sql.all<{ balanceMicros: unknown; updatedAt: unknown }>(
        Prisma.sql`SELECT "balanceMicros", "updatedAt" FROM "PayerCredit" WHERE "updatedAt" <= ${at}`,
      );
      t.equal(bigintOf(read?.balanceMicros), huge, 'a bigint beyond 2^53 keeps every digit');
      t.same(dateOf(read?.updatedAt), at, 'timestamps compare as the ORM stores them');
      t.equal(dateOrNull(null), null);
    });

    await t.test('rows bound as one JSON parameter are written as the ORM writes them', async (t) => {
      const columns = [
        ['sellerId', 'text'],
        ['payer', 'text'],
        ['balanceMicros', 'bigint'],
        ['updatedAt', 'timestamp(3)'],
      ] as const;
      const insert = (rows: unknown[][]) => Prisma.sql`INSERT INTO "PayerCredit" ("sellerId", "payer", "balanceMicros", "updatedAt")
        SELECT "sellerId", "payer", "balanceMicros", "updatedAt" FROM ${jsonRows(provider, columns, rows)} AS batch`;
      const huge = 2n ** 62n + 9n;
      const at = new Date('2026-11-25T08:00:00.007Z');
      t.equal(insert([[1]]).sql, insert([[1], [2], [3]]).sql, 'one text whatever the number of rows');
      t.equal(
        await sql.run(
          insert([
            ['sel_1', '0xj1', huge, at],
            ['sel_1', '0xj2', 0n, at],
          ]),
        ),
        2,
      );
      const read = await db.payerCredit.findMany({ where: { payer: { in: ['0xj1', '0xj2'] } }, orderBy: { payer: 'asc' } });
      t.match(read, [
        { payer: '0xj1', balanceMicros: huge, updatedAt: at },
        { payer: '0xj2', balanceMicros: 0n, updatedAt: at },
      ]);
      t.equal(await db.payerCredit.count({ where: { updatedAt: at } }), 2, 'timestamps compare as the ORM stores them');

      const flags = [
        ['id', 'text'],
        ['sandbox', 'boolean'],
        ['status', 'integer'],
      ] as const;
      const [off, on] = await sql.all<{ id: string; sandbox: unknown; status: unknown }>(
        Prisma.sql`SELECT * FROM ${jsonRows(provider, flags, [
          ['a', false, null],
          ['b', true, 200],
        ])} AS batch ORDER BY "id"`,
      );
      t.match([booleanOf(off?.sandbox), off?.status, booleanOf(on?.sandbox), Number(on?.status)], [false, null, true, 200]);
    });

    await t.test('a transaction that throws writes nothing', async (t) => {
      const failed = await sql
        .transaction(async (tx) => {
          await tx.run(Prisma.sql`UPDATE "Organization" SET "name" = ${'changed'} WHERE "id" = ${'org_1'}`);
          t.equal((await tx.get<OrgRow>(Prisma.sql`SELECT "name" FROM "Organization" WHERE "id" = ${'org_1'}`))?.name, 'changed');
          throw new Error('roll back');
        })
        .catch((err: Error) => err.message);
      t.equal(failed, 'roll back');
      t.equal((await db.organization.findUniqueOrThrow({ where: { id: 'org_1' } })).name, 'Acme');
      const committed = await sql.transaction(async (tx) =>
        tx.run(Prisma.sql`UPDATE "Organization" SET "name" = ${'Acme Inc'} WHERE "id" = ${'org_1'}`),
      );
      t.equal(committed, 1);
      t.equal((await db.organization.findUniqueOrThrow({ where: { id: 'org_1' } })).name, 'Acme Inc');
    });

    await t.test('neither runs inside the other’s transaction', async (t) => {
      // An ORM transaction that rolls back while the lane writes: the lane's write stays.
      const ormRolledBack = db
        .$transaction(async (tx) => {
          await tx.organization.create({ data: { id: 'org_orm', name: 'orm' } });
          await pause(80);
          throw new Error('roll back');
        })
        .catch(() => 'rolled back');
      await pause(20);
      const laneWrite = sql.run(Prisma.sql`INSERT INTO "Organization" ("id", "name", "createdAt", "updatedAt")
        VALUES (${'org_lane'}, ${'lane'}, ${new Date()}, ${new Date()})`);
      t.equal(await ormRolledBack, 'rolled back');
      t.equal(await laneWrite, 1);

      // A lane transaction that rolls back while the ORM writes: the ORM's write stays.
      const laneRolledBack = sql
        .transaction(async (tx) => {
          await tx.run(Prisma.sql`UPDATE "Organization" SET "name" = ${'gone'} WHERE "id" = ${'org_lane'}`);
          await pause(80);
          throw new Error('roll back');
        })
        .catch(() => 'rolled back');
      await pause(20);
      const ormWrite = db.organization.create({ data: { id: 'org_orm2', name: 'orm2' } });
      t.equal(await laneRolledBack, 'rolled back');
      await ormWrite;
      const names = (await db.organization.findMany({ orderBy: { id: 'asc' } })).map((o) => `${o.id}:${o.name}`);
      t.same(names, ['org_1:Acme Inc', 'org_lane:lane', 'org_orm2:orm2']);
    });

    await t.test('writes run together: all or none, a sibling’s row good for a foreign key', async (t) => {
      const organization = (id: string) =>
        Prisma.sql`INSERT INTO "Organization" ("id", "name", "updatedAt") VALUES (${id}, ${`name of ${id}`}, ${new Date()})`;
      const seller = (id: string, organizationId: string) => Prisma.sql`
        INSERT INTO "Seller" ("id", "organizationId", "name", "slug", "upstreamBaseUrl", "updatedAt")
        VALUES (${id}, ${organizationId}, ${id}, ${id}, ${'http://127.0.0.1:9'}, ${new Date()})`;
      await sql.runAll([
        organization('org_2'),
        seller('sel_2', 'org_2'),
        Prisma.sql`UPDATE "Organization" SET "name" = ${'renamed'} WHERE "id" = ${'org_1'}`,
      ]);
      t.equal((await db.seller.findUniqueOrThrow({ where: { id: 'sel_2' } })).organizationId, 'org_2');
      t.equal(
        (await db.organization.findUniqueOrThrow({ where: { id: 'org_1' } })).name,
        'renamed',
        'each value bound to its own statement',
      );
      const refused = await sql.runAll([organization('org_3'), seller('sel_3', 'org_nowhere')]).then(
        () => 'written',
        () => 'refused',
      );
      t.equal(refused, 'refused');
      t.equal(await db.organization.findUnique({ where: { id: 'org_3' } }), null, 'nothing of it is written');
      await sql.runAll([]);
      await sql.runAll([organization('org_4')]);
      t.ok(await db.organization.findUnique({ where: { id: 'org_4' } }), 'one statement alone');
    });
  });
}
