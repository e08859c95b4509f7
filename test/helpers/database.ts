import { createHash } from 'node:crypto';
import { copyFileSync, existsSync, mkdtempSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { type Db, openDatabase, type Provider } from '../../control-plane/db/client.js';
import { checksumOf, migrateDatabase } from '../../control-plane/db/migrate.js';
import { listMigrations } from '../../control-plane/db/schema-files.js';
import type { DatabaseConfig } from '../../shared/config.js';
import { randomBase62 } from '../../shared/ids.js';

type Tap = { teardown: (fn: () => unknown) => void };

const dbSources = fileURLToPath(new URL('../../control-plane/db/', import.meta.url));

/** SQLite always; PostgreSQL too when HUB_TEST_PG_URL names a server (as CI does). */
export function testProviders(): Provider[] {
  return process.env.HUB_TEST_PG_URL ? ['sqlite', 'postgresql'] : ['sqlite'];
}

/**
 * A fresh, migrated database of its own for one test; dropped when the test ends. It is a copy of
 * a template that hub's migrator migrated once for the migrations as they are: applying them to
 * every test's database took most of a second each on PostgreSQL.
 */
export async function createTestDatabase(t: Tap, provider: Provider): Promise<{ db: Db; database: DatabaseConfig }> {
  const database = provider === 'sqlite' ? await sqliteDatabase(t) : await postgresDatabase(t);
  const opened = await openDatabase(database, { poolSize: 5 });
  t.teardown(() => opened.close());
  return { db: opened.db, database };
}

/**
 * Names the migrations exactly (names and contents) and the migrator's code: a template made by
 * other migrations, or by a migrator since changed, is never used.
 */
function migrationsKey(provider: Provider): string {
  const hash = createHash('sha256');
  for (const source of ['migrate.ts', 'schema-files.ts']) hash.update(readFileSync(join(dbSources, source)));
  for (const m of listMigrations(provider)) hash.update(`${m.name}\n${checksumOf(m.sql)}\n`);
  return hash.digest('hex').slice(0, 16);
}

let sqliteTemplate: Promise<string> | undefined;

/** A migrated SQLite file shared by test processes, written whole (renamed into place) or not at all. */
function sqliteTemplateFile(): Promise<string> {
  sqliteTemplate ??= (async () => {
    const file = join(tmpdir(), `hub-test-template-${migrationsKey('sqlite')}.db`);
    if (existsSync(file)) return file;
    const dir = mkdtempSync(join(tmpdir(), 'hub-test-template-'));
    try {
      const building = join(dir, 'hub.db');
      await migrateDatabase({ provider: 'sqlite', url: `file:${building}`, file: building });
      renameSync(building, file);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    return file;
  })();
  return sqliteTemplate;
}

async function sqliteDatabase(t: Tap): Promise<DatabaseConfig> {
  const template = await sqliteTemplateFile();
  const dir = mkdtempSync(join(tmpdir(), 'hub-test-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const file = join(dir, 'hub.db');
  copyFileSync(template, file);
  return { provider: 'sqlite', url: `file:${file}`, file };
}

const adminUrl = () => process.env.HUB_TEST_PG_URL!;

function urlOf(name: string): string {
  const url = new URL(adminUrl());
  url.pathname = `/${name}`;
  return url.toString();
}

/** Held while a template is looked for or made, by every test process on the server. */
const PG_TEMPLATE_LOCK = 72707370;
let postgresTemplate: Promise<string> | undefined;

/**
 * A migrated PostgreSQL database to copy (CREATE DATABASE … TEMPLATE), made once per set of
 * migrations. It takes no connections: a connection to it would make every copy fail.
 */
function postgresTemplateName(): Promise<string> {
  postgresTemplate ??= (async () => {
    const name = `hub_test_template_${migrationsKey('postgresql')}`;
    const admin = new pg.Client({ connectionString: adminUrl() });
    await admin.connect();
    try {
      await admin.query('SELECT pg_advisory_lock($1)', [PG_TEMPLATE_LOCK]);
      const { rowCount } = await admin.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
      if (!rowCount) {
        const building = `hub_test_building_${randomBase62(12).toLowerCase()}`;
        await admin.query(`CREATE DATABASE "${building}"`);
        try {
          await migrateDatabase({ provider: 'postgresql', url: urlOf(building) });
          await admin.query(`ALTER DATABASE "${building}" RENAME TO "${name}"`);
        } catch (err) {
          await admin.query(`DROP DATABASE IF EXISTS "${building}" WITH (FORCE)`);
          throw err;
        }
        await admin.query(`ALTER DATABASE "${name}" WITH IS_TEMPLATE true ALLOW_CONNECTIONS false`);
      }
    } finally {
      await admin.end();
    }
    return name;
  })();
  return postgresTemplate;
}

async function postgresDatabase(t: Tap): Promise<DatabaseConfig> {
  const template = await postgresTemplateName();
  const name = `hub_test_${randomBase62(12).toLowerCase()}`;
  const admin = new pg.Client({ connectionString: adminUrl() });
  await admin.connect();
  await admin.query(`CREATE DATABASE "${name}" TEMPLATE "${template}"`);
  // Commits there do not wait for the disk: no test is about a server that crashes, and the
  // flush was about 4 ms a commit (0.3 ms without). What each commit makes visible, and when, is
  // the same either way.
  await admin.query(`ALTER DATABASE "${name}" SET synchronous_commit = off`);
  await admin.end();
  t.teardown(async () => {
    const cleanup = new pg.Client({ connectionString: adminUrl() });
    await cleanup.connect();
    await cleanup.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
    await cleanup.end();
  });
  return { provider: 'postgresql', url: urlOf(name) };
}
