import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { PrismaClient as PgPrismaClient } from '../../generated/prisma/postgresql/client.js';
import { PrismaClient } from '../../generated/prisma/sqlite/client.js';
import type { DatabaseConfig } from '../../shared/config.js';
import { adapterFactory, readPool } from './adapter.js';
import { postgresSql, registerReadSql, registerSql, sqliteReadSql } from './sql.js';

/**
 * The app-wide database type. Both generated clients come from the same models; the SQLite
 * client's type is the stricter subset, so the PostgreSQL client is used through it.
 */
export type Db = PrismaClient;
export type Provider = DatabaseConfig['provider'];

/**
 * Errors without the caller's source location: Prisma captures a stack trace on every query to
 * show one, which cost a tenth of a simple query's CPU, and hub never shows Prisma's messages to
 * anyone (errors.ts maps them to the spec's envelope; logs keep the stack of the error itself).
 */
const ERROR_FORMAT = 'minimal';

export type OpenedDb = { db: Db; provider: Provider; close: () => Promise<void> };

export async function openDatabase(database: DatabaseConfig, options: { poolSize?: number } = {}): Promise<OpenedDb> {
  if (database.provider === 'sqlite') {
    if (database.file !== ':memory:') mkdirSync(dirname(database.file), { recursive: true });
    const { factory, sql } = adapterFactory(database);
    const db = new PrismaClient({ adapter: factory, errorFormat: ERROR_FORMAT });
    registerSql(db, sql);
    // WAL lets readers run beside the one writer; NORMAL sync is durable across process crashes.
    await db.$queryRawUnsafe('PRAGMA journal_mode = WAL');
    await db.$executeRawUnsafe('PRAGMA synchronous = NORMAL');
    await db.$executeRawUnsafe('PRAGMA foreign_keys = ON');
    // After the PRAGMAs: a read-only connection cannot switch the file to WAL itself.
    const reads = database.file === ':memory:' ? undefined : sqliteReadSql(database.file);
    if (reads) registerReadSql(db, reads);
    const close = async () => {
      reads?.close();
      await db.$disconnect();
    };
    return { db, provider: 'sqlite', close };
  }
  const { factory, dispose, sql } = adapterFactory(database, options);
  const db = new PgPrismaClient({ adapter: factory, errorFormat: ERROR_FORMAT }) as unknown as Db;
  registerSql(db, sql);
  const reads = readPool(database.url);
  registerReadSql(db, postgresSql(reads));
  const close = async () => {
    await db.$disconnect();
    await dispose();
    await reads.end();
  };
  try {
    await db.$queryRawUnsafe('SELECT 1');
  } catch (err) {
    await close();
    throw err;
  }
  return { db, provider: 'postgresql', close };
}

/** True when the database answers a trivial query (readiness). */
export async function databaseIsReachable(db: Db): Promise<boolean> {
  try {
    await db.$queryRawUnsafe('SELECT 1');
    return true;
  } catch {
    return false;
  }
}
