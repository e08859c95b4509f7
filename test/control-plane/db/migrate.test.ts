import Database from 'better-sqlite3';
import pg from 'pg';
import t from 'tap';
import { checksumOf, MigrationError, migrateDatabase } from '../../../control-plane/db/migrate.js';
import { listMigrations } from '../../../control-plane/db/schema-files.js';
import type { DatabaseConfig } from '../../../shared/config.js';
import { createTestDatabase, testProviders } from '../../helpers/database.js';

/** Runs one SQL query against the test database with the raw driver (not through Prisma). */
async function rawQuery(database: DatabaseConfig, sql: string): Promise<Record<string, unknown>[]> {
  if (database.provider === 'sqlite') {
    const db = new Database(database.file, { readonly: true });
    try {
      return db.prepare(sql).all() as Record<string, unknown>[];
    } finally {
      db.close();
    }
  }
  const client = new pg.Client({ connectionString: database.url });
  await client.connect();
  try {
    return (await client.query(sql)).rows;
  } finally {
    await client.end();
  }
}

const tableNames = (database: DatabaseConfig) =>
  rawQuery(
    database,
    database.provider === 'sqlite'
      ? `SELECT name FROM sqlite_master WHERE type = 'table'`
      : `SELECT table_name AS name FROM information_schema.tables WHERE table_schema = 'public'`,
  ).then((rows) => rows.map((r) => String(r.name)));

for (const provider of testProviders()) {
  t.test(`migrations on ${provider}`, async (t) => {
    const { database } = await createTestDatabase(t, provider);

    await t.test('apply every model table and record them as Prisma does', async (t) => {
      const tables = await tableNames(database);
      for (const table of [
        'Organization',
        'User',
        'Membership',
        'Session',
        'ApiKey',
        'Seller',
        'SigningSecret',
        'Service',
        'Meter',
        'Plan',
        'PlanMeterPrice',
        'Buyer',
        'Agent',
        'Access',
        'AccountWrite',
        'PaymentAttempt',
        'PaymentReplay',
        'RequestRecord',
        'UsageEvent',
        'PageView',
        'CheckoutSession',
        'MailOutbox',
      ]) {
        t.ok(tables.includes(table), `${table} exists`);
      }
      const rows = await rawQuery(database, 'SELECT migration_name, checksum, finished_at FROM _prisma_migrations');
      const expected = listMigrations(provider);
      t.equal(rows.length, expected.length);
      t.equal(rows[0]?.checksum, checksumOf(expected[0]!.sql), 'checksum is the SHA-256 of migration.sql');
      t.ok(rows[0]?.finished_at);
    });

    await t.test('a second run applies nothing', async (t) => {
      t.same(await migrateDatabase(database), []);
    });

    await t.test('a failing migration leaves the database as it was and can be retried', async (t) => {
      const before = await tableNames(database);
      const broken = [
        ...listMigrations(provider),
        {
          name: '29990101000000_broken',
          sql: 'CREATE TABLE "ShouldVanish" ("id" INTEGER);\nINSERT INTO "Organization" ("id", "name", "updatedAt") VALUES (\'org_x\', \'x\', CURRENT_TIMESTAMP);\nSELECT * FROM "NoSuchTable";\n',
        },
      ];
      const err = await migrateDatabase(database, broken).catch((e) => e);
      t.type(err, MigrationError);
      t.match(err.message, /migration 29990101000000_broken failed and was rolled back, the database is unchanged/);
      t.notMatch(err.message, /\n/, 'one line');
      t.same(await tableNames(database), before, 'no table was left behind');
      t.same(
        await rawQuery(database, 'SELECT COUNT(*) AS n FROM "Organization"').then((r) => Number(r[0]!.n)),
        0,
        'no row was left behind',
      );
      const recorded = await rawQuery(
        database,
        `SELECT migration_name FROM _prisma_migrations WHERE migration_name = '29990101000000_broken'`,
      );
      t.same(recorded, [], 'no failed row blocks the next start');
      const fixed = [...listMigrations(provider), { name: '29990101000000_broken', sql: 'CREATE TABLE "NowFine" ("id" INTEGER);\n' }];
      t.same(await migrateDatabase(database, fixed), ['29990101000000_broken'], 'the corrected migration applies');
    });

    await t.test('an applied migration that was edited is refused', async (t) => {
      const edited = listMigrations(provider).map((m, i) => (i === 0 ? { ...m, sql: `${m.sql}\n-- edited\n` } : m));
      const err = await migrateDatabase(database, edited).catch((e) => e);
      t.type(err, MigrationError);
      t.match(err.message, /was changed after it was applied/);
    });
  });
}

t.test('an unreachable PostgreSQL fails with one clear line', async (t) => {
  const err = await migrateDatabase({ provider: 'postgresql', url: 'postgresql://postgres@127.0.0.1:1/nothing' }).catch((e) => e);
  t.type(err, MigrationError);
  t.match(err.message, /^cannot reach PostgreSQL at postgresql:\/\/127\.0\.0\.1:1\/nothing: ECONNREFUSED$/);
});

t.test(
  'a PostgreSQL without the named database says so, and how to create it',
  { skip: !process.env.HUB_TEST_PG_URL && 'HUB_TEST_PG_URL is not set' },
  async (t) => {
    const url = new URL(process.env.HUB_TEST_PG_URL!);
    url.pathname = `/hub_missing_${process.pid}`;
    const err = await migrateDatabase({ provider: 'postgresql', url: url.toString() }).catch((e) => e);
    t.type(err, MigrationError);
    t.match(
      err.message,
      new RegExp(
        `^PostgreSQL at ${url.host} has no database "hub_missing_${process.pid}": create it \\(createdb -h ${url.hostname} -p ${url.port || 5432} hub_missing_${process.pid}, or CREATE DATABASE`,
      ),
    );
  },
);
