import { PrismaBetterSqlite3 } from '@prisma/adapter-better-sqlite3';
import { PrismaPg } from '@prisma/adapter-pg';
import type { SqlMigrationAwareDriverAdapterFactory } from '@prisma/driver-adapter-utils';
import type { Database } from 'better-sqlite3';
import pg from 'pg';
import type { DatabaseConfig } from '../../shared/config.js';
import { postgresSql, sqliteSql } from './sql.js';
import { patchSqliteClient } from './sqlite-client.js';
import { withStatementCache } from './statement-cache.js';
import { type ConnectionTurns, withTransactionGate } from './transaction-gate.js';

/** How long a SQLite writer waits for the file lock before giving up (ms). */
const SQLITE_BUSY_TIMEOUT_MS = 10_000;

/** PostgreSQL's one-byte internal `"char"` type and `text`. */
const PG_CHAR_OID = 18;
const PG_TEXT_OID = 25;

type AdapterOptions = { poolSize?: number; forSchemaEngine?: boolean };

/**
 * Connections of the PostgreSQL pool the ORM and the SQL lane share. A connection is a server
 * process: past two or three per core, more of them only queue in the server instead of in the
 * pool. Some wait on the network rather than the CPU (a transaction holds its connection across
 * its round trips, and a usage draw's locked transaction while it queues for an access's row), so
 * a few more than that, and no more, since a full pool makes callers wait in order while an
 * overfull server makes them all slow. Usage writes commit in groups (usage/group-commit.ts) and
 * take one connection per group.
 */
export const POOL_SIZE = 10;

/**
 * Connections of the read lane's pool (usage/reader.ts). Lookups travel in batches, at most two at
 * a time, and a catalog or an included-units count now and then beside them.
 */
export const READ_POOL_SIZE = 4;

/**
 * No statement runs longer than this on the shared pool (ms): long enough for a usage draw queued
 * on one access's row behind others (usage/draw.ts: 100 reports behind a pool of a few
 * connections), so only a statement stuck past any such wait is cut off, and its connection comes
 * back.
 */
export const STATEMENT_TIMEOUT_MS = 15_000;

/** Reads are index lookups of a few milliseconds at most: one stuck this long is cut off (ms). */
export const READ_STATEMENT_TIMEOUT_MS = 5_000;

/**
 * The read lane's own pool on PostgreSQL. Its sessions are read-only, and plan each prepared
 * statement once, generically, as index lookups and nested loops only. Its statements look rows
 * up by lists of keys on indexed columns (usage/reader.ts): re-planning them for each run's values
 * (PostgreSQL's default when an estimate depends on them) cost several times running them, and a
 * plan made once must stay right as tables grow: a plan made while a table was nearly empty (a
 * new deployment) would scan the whole table on every run, until statistics caught up. The
 * shared pool keeps the defaults: the ORM's statements are planned per run.
 */
export function readPool(url: string): pg.Pool {
  return postgresPool({
    connectionString: url,
    max: READ_POOL_SIZE,
    statement_timeout: READ_STATEMENT_TIMEOUT_MS,
    options: [
      'plan_cache_mode=force_generic_plan',
      'enable_seqscan=off',
      'enable_hashjoin=off',
      'enable_mergejoin=off',
      'join_collapse_limit=1',
      'default_transaction_read_only=on',
    ]
      .map((setting) => `-c ${setting}`)
      .join(' '),
  });
}

/** A pool whose idle client losing its server does not crash the process: the next query reconnects. */
function postgresPool(config: pg.PoolConfig): pg.Pool {
  const pool = new pg.Pool({ connectionTimeoutMillis: 5_000, ...config });
  pool.on('error', () => {});
  return pool;
}

/**
 * The Prisma driver adapter for a configured database (better-sqlite3 or node-postgres) and a
 * `dispose` that releases what the adapter cannot: the PostgreSQL pool we created for it.
 */
export function adapterFactory(database: DatabaseConfig, options: AdapterOptions = {}) {
  if (database.provider === 'sqlite') {
    let connection: ConnectionTurns | undefined;
    const sqlite = new PrismaBetterSqlite3({ url: database.file, timeout: SQLITE_BUSY_TIMEOUT_MS });
    const factory = withTransactionGate(withStatementCache(options.forSchemaEngine ? withIndexNamesAsStrings(sqlite) : sqlite), (turns) => {
      connection = turns;
    });
    const turns = () => {
      if (!connection) throw new Error('The database is not connected yet.');
      return connection;
    };
    return { factory, dispose: async () => {}, sql: sqliteSql(turns) };
  }
  const pool = postgresPool({
    connectionString: database.url,
    max: options.poolSize ?? POOL_SIZE,
    // Migrations are the schema engine's, and may take as long as they need.
    ...(options.forSchemaEngine ? {} : { statement_timeout: STATEMENT_TIMEOUT_MS }),
  });
  // The schema engine never hands its connection back; track clients so dispose can close them.
  const clients = new Set<pg.PoolClient>();
  pool.on('connect', (client) => {
    clients.add(client);
    if (options.forSchemaEngine) reportCharColumnsAsText(client);
  });
  pool.on('remove', (client) => clients.delete(client as pg.PoolClient));
  const dispose = async () => {
    for (const client of clients) (client as unknown as { end: () => void }).end();
    await pool.end();
  };
  return { factory: new PrismaPg(pool), dispose, sql: postgresSql(pool) };
}

/**
 * The schema engine reads a partial index's predicate from SQLite's catalog with the index's name
 * in double quotes (`... AND name = "AccountWrite_due_idx"`), a string literal SQLite accepts only
 * when built to (better-sqlite3 is built without: SQLITE_DQS=0), so describing a database with a
 * partial index failed. On schema-engine connections that name is read as a string.
 */
function withIndexNamesAsStrings(factory: SqlMigrationAwareDriverAdapterFactory): SqlMigrationAwareDriverAdapterFactory {
  const predicateRead = /^(SELECT sql FROM sqlite_master WHERE type = 'index' AND name = )"((?:[^"]|"")*)";?$/;
  return patchSqliteClient(factory, (client) => {
    const prepare = client.prepare.bind(client);
    client.prepare = ((sql: string) =>
      prepare(
        sql.replace(predicateRead, (_, head: string, name: string) => `${head}'${name.replaceAll('""', '"').replaceAll("'", "''")}'`),
      )) as Database['prepare'];
  });
}

/**
 * The schema engine reads PostgreSQL's catalogs, whose `relkind`-style columns have the internal
 * `"char"` type that the driver adapter cannot map. Its values are plain one-letter strings, so
 * schema-engine connections report those columns as text.
 */
function reportCharColumnsAsText(client: pg.PoolClient): void {
  const fix = (res: pg.QueryResult | undefined) => {
    for (const field of res?.fields ?? []) if (field.dataTypeID === PG_CHAR_OID) field.dataTypeID = PG_TEXT_OID;
    return res;
  };
  const query = client.query.bind(client) as (...args: unknown[]) => unknown;
  (client as unknown as { query: (...args: unknown[]) => unknown }).query = (...args: unknown[]) => {
    const last = args.at(-1);
    if (typeof last === 'function') {
      args[args.length - 1] = (err: Error | null, res: pg.QueryResult) => last(err, fix(res));
      return query(...args);
    }
    const result = query(...args);
    return result instanceof Promise ? result.then(fix) : result;
  };
}
