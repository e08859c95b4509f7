import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { type Db, openDatabase, type Provider } from '../../control-plane/db/client.js';
import { migrateDatabase } from '../../control-plane/db/migrate.js';
import type { DatabaseConfig } from '../../shared/config.js';
import { randomBase62 } from '../../shared/ids.js';

type Tap = { teardown: (fn: () => unknown) => void };

/** SQLite always; PostgreSQL too when HUB_TEST_PG_URL names a server (as CI does). */
export function testProviders(): Provider[] {
  return process.env.HUB_TEST_PG_URL ? ['sqlite', 'postgresql'] : ['sqlite'];
}

/** A fresh, migrated database of its own for one test; dropped when the test ends. */
export async function createTestDatabase(t: Tap, provider: Provider): Promise<{ db: Db; database: DatabaseConfig }> {
  const database = provider === 'sqlite' ? sqliteDatabase(t) : await postgresDatabase(t);
  await migrateDatabase(database);
  const opened = await openDatabase(database, { poolSize: 5 });
  t.teardown(() => opened.close());
  return { db: opened.db, database };
}

function sqliteDatabase(t: Tap): DatabaseConfig {
  const dir = mkdtempSync(join(tmpdir(), 'hub-test-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const file = join(dir, 'hub.db');
  return { provider: 'sqlite', url: `file:${file}`, file };
}

async function postgresDatabase(t: Tap): Promise<DatabaseConfig> {
  const adminUrl = process.env.HUB_TEST_PG_URL!;
  const name = `hub_test_${randomBase62(12).toLowerCase()}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  await admin.query(`CREATE DATABASE "${name}"`);
  await admin.end();
  t.teardown(async () => {
    const cleanup = new pg.Client({ connectionString: adminUrl });
    await cleanup.connect();
    await cleanup.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
    await cleanup.end();
  });
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return { provider: 'postgresql', url: url.toString() };
}
