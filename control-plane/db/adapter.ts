import { PrismaBetterSqlite3 } from '@prisma/adapter-better-sqlite3';
import { PrismaPg } from '@prisma/adapter-pg';
import pg from 'pg';
import type { DatabaseConfig } from '../../shared/config.js';
import { postgresSql, sqliteSql } from './sql.js';
import { withStatementCache } from './statement-cache.js';
import { type ConnectionTurns, withTransactionGate } from './transaction-gate.js';

/** How long a SQLite writer waits for the file lock before giving up (ms). */
const SQLITE_BUSY_TIMEOUT_MS = 10_000;

/** PostgreSQL's one-byte internal `"char"` type and `text`. */
const PG_CHAR_OID = 18;
const PG_TEXT_OID = 25;

type AdapterOptions = { poolSize?: number; forSchemaEngine?: boolean };

/**
 * The Prisma driver adapter for a configured database (better-sqlite3 or node-postgres) and a
 * `dispose` that releases what the adapter cannot: the PostgreSQL pool we created for it.
 */
export function adapterFactory(database: DatabaseConfig, options: AdapterOptions = {}) {
  if (database.provider === 'sqlite') {
    let connection: ConnectionTurns | undefined;
    const factory = withTransactionGate(
      withStatementCache(new PrismaBetterSqlite3({ url: database.file, timeout: SQLITE_BUSY_TIMEOUT_MS })),
      (turns) => {
        connection = turns;
      },
    );
    const turns = () => {
      if (!connection) throw new Error('The database is not connected yet.');
      return connection;
    };
    return { factory, dispose: async () => {}, sql: sqliteSql(turns) };
  }
  const pool = new pg.Pool({
    connectionString: database.url,
    max: options.poolSize ?? 10,
    connectionTimeoutMillis: 5_000,
  });
  // An idle client that loses its server must not crash the process; the next query reconnects.
  pool.on('error', () => {});
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
