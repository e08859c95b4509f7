import { createHash, randomUUID } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import Database from 'better-sqlite3';
import pg from 'pg';
import type { DatabaseConfig } from '../../shared/config.js';
import { describeDatabase } from './describe.js';
import { listMigrations, type MigrationFolder } from './schema-files.js';

/**
 * Applies the repository's migrations. Each migration and its bookkeeping row commit in one
 * transaction, so a migration that fails leaves the database exactly as it was (Prisma's own
 * engine runs them outside a transaction and leaves a "failed" row behind). Rows go to
 * `_prisma_migrations` in Prisma's format (checksum = SHA-256 of migration.sql), so
 * `prisma migrate deploy` and hub agree on what has been applied.
 */
export class MigrationError extends Error {
  override name = 'MigrationError';
}

/** Prisma's advisory lock key for migrations: replicas starting together apply each migration once. */
const PG_MIGRATION_LOCK = 72707369;

const SQLITE_TABLE = `CREATE TABLE IF NOT EXISTS "_prisma_migrations" (
  "id" TEXT PRIMARY KEY NOT NULL, "checksum" TEXT NOT NULL, "finished_at" DATETIME,
  "migration_name" TEXT NOT NULL, "logs" TEXT, "rolled_back_at" DATETIME,
  "started_at" DATETIME NOT NULL DEFAULT current_timestamp, "applied_steps_count" INTEGER UNSIGNED NOT NULL DEFAULT 0)`;

const PG_TABLE = `CREATE TABLE IF NOT EXISTS "_prisma_migrations" (
  "id" VARCHAR(36) PRIMARY KEY NOT NULL, "checksum" VARCHAR(64) NOT NULL, "finished_at" TIMESTAMPTZ,
  "migration_name" VARCHAR(255) NOT NULL, "logs" TEXT, "rolled_back_at" TIMESTAMPTZ,
  "started_at" TIMESTAMPTZ NOT NULL DEFAULT now(), "applied_steps_count" INTEGER NOT NULL DEFAULT 0)`;

export function checksumOf(sql: string): string {
  return createHash('sha256').update(sql, 'utf8').digest('hex');
}

type Applied = { migration_name: string; checksum: string };

/** The migrations still to apply, after checking that none already applied was edited since. */
function pending(migrations: MigrationFolder[], applied: Applied[]): MigrationFolder[] {
  const done = new Map(applied.map((row) => [row.migration_name, row.checksum]));
  for (const m of migrations) {
    const checksum = done.get(m.name);
    if (checksum !== undefined && checksum !== checksumOf(m.sql)) {
      throw new MigrationError(`migration ${m.name} was changed after it was applied; restore it and add a new migration instead`);
    }
  }
  return migrations.filter((m) => !done.has(m.name));
}

function failure(name: string, err: unknown): MigrationError {
  const message = (err instanceof Error ? err.message : String(err)).split('\n')[0];
  return new MigrationError(`migration ${name} failed and was rolled back, the database is unchanged: ${message}`);
}

export async function migrateDatabase(database: DatabaseConfig, migrations = listMigrations(database.provider)): Promise<string[]> {
  return database.provider === 'sqlite' ? migrateSqlite(database.file, migrations) : migratePostgres(database, migrations);
}

function migrateSqlite(file: string, migrations: MigrationFolder[]): string[] {
  if (file !== ':memory:') mkdirSync(dirname(file), { recursive: true });
  let db: Database.Database;
  try {
    db = new Database(file, { timeout: 10_000 });
  } catch (err) {
    throw new MigrationError(`cannot open the SQLite database ${file}: ${(err as Error).message}`);
  }
  try {
    // Prisma's SQLite scripts rebuild tables with foreign keys switched off; that switch is
    // ignored inside a transaction, so it is made here and the keys are checked before commit.
    db.pragma('foreign_keys = OFF');
    db.exec(SQLITE_TABLE);
    const appliedNow: string[] = [];
    for (const m of migrations) {
      db.exec('BEGIN IMMEDIATE');
      try {
        // Re-read under the write lock: another process may have applied it meanwhile.
        const applied = db
          .prepare('SELECT migration_name, checksum FROM _prisma_migrations WHERE finished_at IS NOT NULL AND rolled_back_at IS NULL')
          .all() as Applied[];
        if (pending([m], applied).length === 0) {
          db.exec('ROLLBACK');
          continue;
        }
        db.exec(m.sql);
        const violations = db.pragma('foreign_key_check') as unknown[];
        if (violations.length) throw new Error(`${violations.length} foreign key violation(s)`);
        db.prepare(
          'INSERT INTO _prisma_migrations (id, checksum, finished_at, migration_name, started_at, applied_steps_count) VALUES (?, ?, ?, ?, ?, 1)',
        ).run(randomUUID(), checksumOf(m.sql), new Date().toISOString(), m.name, new Date().toISOString());
        db.exec('COMMIT');
        appliedNow.push(m.name);
      } catch (err) {
        if (db.inTransaction) db.exec('ROLLBACK');
        if (err instanceof MigrationError) throw err;
        throw failure(m.name, err);
      }
    }
    return appliedNow;
  } finally {
    db.close();
  }
}

/** Why PostgreSQL refused the connection, with what to do when the server answered at all. */
function unreachable(database: DatabaseConfig, err: NodeJS.ErrnoException): string {
  const url = new URL(database.url);
  const name = decodeURIComponent(url.pathname.slice(1));
  const user = decodeURIComponent(url.username) || 'the connecting user';
  // SQLSTATE codes: 3D000 invalid_catalog_name, 28P01 / 28000 authentication failures.
  if (err.code === '3D000') {
    return `PostgreSQL at ${url.host} has no database "${name}": create it (createdb -h ${url.hostname} -p ${url.port || 5432} ${name}, or CREATE DATABASE "${name}" in psql) and start again`;
  }
  if (err.code === '28P01' || err.code === '28000')
    return `PostgreSQL at ${url.host} refused ${user}: check the user and password in DATABASE_URL`;
  return `cannot reach PostgreSQL at ${describeDatabase(database)}: ${err.code ?? err.message}`;
}

async function migratePostgres(database: DatabaseConfig, migrations: MigrationFolder[]): Promise<string[]> {
  const client = new pg.Client({ connectionString: database.url, connectionTimeoutMillis: 5_000 });
  client.on('error', () => {});
  try {
    await client.connect();
  } catch (err) {
    throw new MigrationError(unreachable(database, err as NodeJS.ErrnoException));
  }
  try {
    await client.query('SELECT pg_advisory_lock($1)', [PG_MIGRATION_LOCK]);
    await client.query(PG_TABLE);
    const { rows } = await client.query<Applied>(
      'SELECT migration_name, checksum FROM _prisma_migrations WHERE finished_at IS NOT NULL AND rolled_back_at IS NULL',
    );
    const appliedNow: string[] = [];
    for (const m of pending(migrations, rows)) {
      await client.query('BEGIN');
      try {
        await client.query(m.sql);
        await client.query(
          'INSERT INTO _prisma_migrations (id, checksum, finished_at, migration_name, started_at, applied_steps_count) VALUES ($1, $2, now(), $3, now(), 1)',
          [randomUUID(), checksumOf(m.sql), m.name],
        );
        await client.query('COMMIT');
        appliedNow.push(m.name);
      } catch (err) {
        await client.query('ROLLBACK').catch(() => {});
        throw failure(m.name, err);
      }
    }
    return appliedNow;
  } finally {
    await client.end().catch(() => {});
  }
}
