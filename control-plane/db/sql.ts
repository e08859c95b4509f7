import { createHash } from 'node:crypto';
import BetterSqlite3, { type Database } from 'better-sqlite3';
import pg from 'pg';
import { Prisma } from '../../generated/prisma/sqlite/client.js';
import type { DatabaseConfig } from '../../shared/config.js';
import { cacheStatements } from './statement-cache.js';
import type { ConnectionTurns } from './transaction-gate.js';

/**
 * Statements run on the ORM's own connections without the ORM: the lane a paid call's writes and
 * reads take (challenge, claim, settlement, credit). Prisma spends a few hundred microseconds of
 * CPU building and mapping each query, more than SQLite or PostgreSQL take to run it; a paid call
 * is made of about twenty. Statements are `Prisma.sql` templates, so values are always bound and
 * one text serves both databases (`?` placeholders on SQLite, `$n` on PostgreSQL).
 *
 * Values go in as JavaScript values (bigint, Date, boolean, string, number, null) and come out as
 * each driver gives them; read them with the column readers below, which accept either.
 */
export interface Sql {
  all<Row>(query: Prisma.Sql): Promise<Row[]>;
  get<Row>(query: Prisma.Sql): Promise<Row | undefined>;
  /** Rows changed. */
  run(query: Prisma.Sql): Promise<number>;
}

export interface SqlDatabase extends Sql {
  readonly provider: DatabaseConfig['provider'];
  /** Runs `work` in one transaction: committed when it resolves, rolled back when it throws. */
  transaction<T>(work: (tx: Sql) => Promise<T>): Promise<T>;
  /**
   * Runs writes that need nothing read back as one unit, all or none: a transaction on SQLite,
   * one statement on PostgreSQL (`postgresSql`). No write may need to see another's rows but
   * through a constraint (a foreign key to a row a sibling inserts holds).
   */
  runAll(statements: readonly Prisma.Sql[]): Promise<void>;
}

/** Keyed by the ORM client the lane shares its connections with. */
const lanes = new WeakMap<object, SqlDatabase>();

/** The lane beside an opened database (client.ts › openDatabase registers it). */
export function sqlOf(db: object): SqlDatabase {
  const lane = lanes.get(db);
  if (!lane) throw new Error('This database was not opened by openDatabase.');
  return lane;
}

export function registerSql(db: object, lane: SqlDatabase): void {
  lanes.set(db, lane);
}

/**
 * SQLite, on the adapter's single connection: a statement, or a transaction's statements, run
 * while no ORM transaction is open and keep the ORM's statements out until done (the gate of
 * transaction-gate.ts). better-sqlite3 runs each statement synchronously, so nothing interleaves.
 */
export function sqliteSql(turns: () => ConnectionTurns): SqlDatabase {
  const alone = <T>(work: (lane: Sql) => Promise<T>) => {
    const { database, exclusive } = turns();
    return exclusive(() => work(sqliteStatements(database)));
  };
  return {
    provider: 'sqlite',
    all: (query) => alone((lane) => lane.all(query)),
    get: (query) => alone((lane) => lane.get(query)),
    run: (query) => alone((lane) => lane.run(query)),
    runAll(statements) {
      return this.transaction((tx) => runEach(tx, statements));
    },
    transaction: (work) => {
      const { database, exclusive } = turns();
      return exclusive(async () => {
        // IMMEDIATE: the write lock is taken now, not at the first write, so another process's
        // writer cannot make this transaction fail halfway.
        database.prepare('BEGIN IMMEDIATE').run();
        try {
          const result = await work(sqliteStatements(database));
          database.prepare('COMMIT').run();
          return result;
        } catch (err) {
          if (database.inTransaction) database.prepare('ROLLBACK').run();
          throw err;
        }
      });
    },
  };
}

/**
 * Statements on a better-sqlite3 connection whose `prepare` keeps what it prepared
 * (statement-cache.ts), so a text is parsed and planned once per connection.
 */
function sqliteStatements(database: Database): Sql {
  const encode = (value: unknown) =>
    value instanceof Date ? sqliteTimestamp(value) : typeof value === 'boolean' ? (value ? 1 : 0) : value;
  const statement = (query: Prisma.Sql) => database.prepare(query.sql).bind(...query.values.map(encode));
  return {
    all: async <Row>(query: Prisma.Sql) => statement(query).all() as Row[],
    get: async <Row>(query: Prisma.Sql) => statement(query).get() as Row | undefined,
    run: async (query) => statement(query).run().changes,
  };
}

/**
 * The lane for reads that need committed data only (db/client.ts registers one per database). On a
 * SQLite file it is a read-only connection of its own: its reads take no turn on the ORM's
 * connection (they would wait behind every open transaction there) and never compete for the
 * write lock, and WAL lets it read beside the writer. Elsewhere it is the database's own lane.
 */
export type ReadSql = Sql & { readonly provider: DatabaseConfig['provider'] };

const readLanes = new WeakMap<object, ReadSql>();

export function readSqlOf(db: object): ReadSql {
  return readLanes.get(db) ?? sqlOf(db);
}

export function registerReadSql(db: object, lane: ReadSql): void {
  readLanes.set(db, lane);
}

/** How long a read waits on a lock (only WAL recovery or a checkpoint restart take one). */
const READ_BUSY_TIMEOUT_MS = 5_000;

/** A read-only connection to a SQLite file, as a lane; `close` releases it. */
export function sqliteReadSql(file: string): ReadSql & { close(): void } {
  const database = new BetterSqlite3(file, { readonly: true, fileMustExist: true, timeout: READ_BUSY_TIMEOUT_MS });
  // As the adapter's connection reads them: integers as bigint, never a rounded number.
  database.defaultSafeIntegers(true);
  cacheStatements(database);
  return { provider: 'sqlite', ...sqliteStatements(database), close: () => database.close() };
}

/** How Prisma's SQLite adapter writes a DateTime: ISO 8601 with an explicit UTC offset. */
function sqliteTimestamp(at: Date): string {
  return at.toISOString().replace('Z', '+00:00');
}

const PG_INT8 = 20;
const PG_TIMESTAMP = 1114;

/** bigint as bigint, and timestamps (stored without a zone, in UTC as Prisma writes them) as UTC. */
const pgTypes = {
  getTypeParser: (oid: number, format?: string) => {
    if (oid === PG_INT8) return (text: string) => BigInt(text);
    if (oid === PG_TIMESTAMP) return (text: string) => new Date(`${text.replace(' ', 'T')}Z`);
    return pg.types.getTypeParser(oid, format as 'text');
  },
} as pg.CustomTypesConfig;

/**
 * Statement texts each PostgreSQL connection keeps prepared, at most. The hot paths' texts are
 * few and fixed, and are prepared first; texts that vary with a list's length (multi-row
 * inserts) would otherwise pile up on a long-lived connection for good. Past the bound a new
 * text is parsed and planned per run, as an unnamed statement.
 */
const PREPARED_PER_CONNECTION = 256;
const prepared = new WeakMap<object, Set<string>>();

/** A statement's name: derived from its text, so one text is prepared once per connection. */
const names = new Map<string, string>();
const MAX_NAMES = 4_096;
function statementName(text: string): string {
  let name = names.get(text);
  if (name === undefined) {
    name = `hub_${createHash('sha256').update(text).digest('base64url').slice(0, 22)}`;
    if (names.size >= MAX_NAMES) names.clear();
    names.set(text, name);
  }
  return name;
}

/**
 * PostgreSQL, on the ORM's pool: a transaction holds one pooled connection until it ends. Each
 * statement runs as a named prepared statement: parsed and planned by the server once per
 * connection, not on every run (half the server's work for the simple lookups of the hot paths).
 */
export function postgresSql(pool: pg.Pool): SqlDatabase {
  const encode = (value: unknown) => (value instanceof Date ? value.toISOString() : typeof value === 'bigint' ? value.toString() : value);
  const query = (client: pg.PoolClient, q: Prisma.Sql) => {
    const text = q.text;
    let kept = prepared.get(client);
    if (!kept) {
      kept = new Set();
      prepared.set(client, kept);
    }
    const name = statementName(text);
    const named = kept.has(name) || (kept.size < PREPARED_PER_CONNECTION && Boolean(kept.add(name)));
    return client.query({ ...(named ? { name } : {}), text, values: q.values.map(encode), types: pgTypes });
  };
  const on = (client: pg.PoolClient): Sql => ({
    all: async <Row>(q: Prisma.Sql) => (await query(client, q)).rows as Row[],
    get: async <Row>(q: Prisma.Sql) => (await query(client, q)).rows[0] as Row | undefined,
    run: async (q) => (await query(client, q)).rowCount ?? 0,
  });
  const alone = async <T>(work: (client: pg.PoolClient) => Promise<T>) => {
    const client = await pool.connect();
    // A connection lost while this work holds it (the server restarted, the network cut) is
    // emitted on the client, where nothing else listens: this work's failure, never the process's.
    // The client goes back to the pool destroyed, so no later work is handed a dead connection.
    let lost: Error | undefined;
    const onLost = (err: Error) => {
      lost = err;
    };
    client.on('error', onLost);
    try {
      return await work(client);
    } finally {
      client.off('error', onLost);
      client.release(lost ?? false);
    }
  };
  return {
    provider: 'postgresql',
    all: (q) => alone(async (client) => (await query(client, q)).rows),
    get: (q) => alone(async (client) => (await query(client, q)).rows[0]),
    run: (q) => alone(async (client) => (await query(client, q)).rowCount ?? 0),
    // BEGIN, each statement and COMMIT would be a round trip each, one after the other; as one
    // statement they are one. The writes of a WITH all run, once, in one snapshot, and constraints
    // are checked when the whole statement ends, so a foreign key to a row a sibling inserts holds.
    runAll: async (statements) => {
      if (statements.length === 0) return;
      const writes = statements.map((statement, i) => Prisma.sql`${Prisma.raw(`w${i}`)} AS (${statement})`);
      const one = statements.length === 1 ? statements[0]! : Prisma.sql`WITH ${Prisma.join(writes, ', ')} SELECT 1`;
      await alone((client) => query(client, one));
    },
    transaction: (work) =>
      alone(async (client) => {
        await client.query('BEGIN');
        try {
          const result = await work(on(client));
          await client.query('COMMIT');
          return result;
        } catch (err) {
          await client.query('ROLLBACK').catch(() => {});
          throw err;
        }
      }),
  };
}

/**
 * `IN` a list bound as one parameter, so a statement has one text whatever the list's length (and
 * is prepared once): a JSON array's elements on SQLite, an array on PostgreSQL. Either way the
 * database looks each value up in the column's index, as for a list written out: PostgreSQL
 * plans `= ANY` as an index condition.
 */
export function inList(provider: DatabaseConfig['provider'], values: readonly string[]): Prisma.Sql {
  return provider === 'sqlite'
    ? Prisma.sql`IN (SELECT value FROM json_each(${JSON.stringify(values)}))`
    : Prisma.sql`= ANY(CAST(${[...values]} AS text[]))`;
}

/**
 * `IN` a list of pairs bound as one JSON parameter, for a pair of columns: `(a, b) IN …`. The
 * database looks each pair up in an index on both columns, where a list per column would match
 * one column by the index and filter the other.
 */
export function inPairs(provider: DatabaseConfig['provider'], pairs: readonly (readonly [string, string])[]): Prisma.Sql {
  const json = JSON.stringify(pairs);
  return provider === 'sqlite'
    ? Prisma.sql`IN (SELECT value ->> 0, value ->> 1 FROM json_each(${json}))`
    : Prisma.sql`IN (SELECT value ->> 0, value ->> 1 FROM json_array_elements(CAST(${json} AS json)))`;
}

/** A column of `jsonRows`: its name, and the PostgreSQL type its values are read as. */
export type JsonColumn = readonly [name: string, pgType: string];

/**
 * Rows bound as one JSON parameter (an array of arrays, each value at its column's position), as
 * a table to select from: `FROM ${jsonRows(…)} AS batch`. A statement has one text whatever the
 * number of rows, so it is prepared once, and no number of rows runs into a limit on parameters.
 * SQLite reads each value as the JSON holds it (true and false as 1 and 0, as its columns keep
 * them); PostgreSQL casts each to its column's type, which it could not infer for values that are
 * not yet in a table. Values are written as the lane binds them: timestamps in each database's
 * form, bigints as text.
 */
export function jsonRows(
  provider: DatabaseConfig['provider'],
  columns: readonly JsonColumn[],
  rows: readonly (readonly unknown[])[],
): Prisma.Sql {
  const timestamp = provider === 'sqlite' ? sqliteTimestamp : (at: Date) => at.toISOString();
  const encode = (value: unknown) => (value instanceof Date ? timestamp(value) : typeof value === 'bigint' ? value.toString() : value);
  const json = JSON.stringify(rows.map((row) => row.map(encode)));
  const read = columns.map(([name, pgType], i) =>
    Prisma.raw(provider === 'sqlite' ? `value ->> ${i} AS "${name}"` : `CAST(value ->> ${i} AS ${pgType}) AS "${name}"`),
  );
  return provider === 'sqlite'
    ? Prisma.sql`(SELECT ${Prisma.join(read)} FROM json_each(${json}))`
    : Prisma.sql`(SELECT ${Prisma.join(read)} FROM json_array_elements(CAST(${json} AS json)))`;
}

/**
 * For `INSERT … SELECT … FROM ${jsonRows(…)} AS batch`: keeps the rows of sellers that still
 * exist, since one deleted meanwhile would otherwise fail the whole statement on its foreign key.
 * (It is also the WHERE clause SQLite needs before the ON CONFLICT of an INSERT … SELECT.)
 */
export const OF_EXISTING_SELLER = Prisma.sql`WHERE EXISTS (SELECT 1 FROM "Seller" WHERE "Seller"."id" = batch."sellerId")`;

/** The names of `jsonRows` columns, quoted, for the INSERT and the SELECT that feed from them. */
export function columnList(of: readonly JsonColumn[]): Prisma.Sql {
  return Prisma.raw(of.map(([name]) => `"${name}"`).join(', '));
}

/** Runs statements one after the other (in a transaction, usually). */
export async function runEach(tx: Sql, statements: readonly Prisma.Sql[]): Promise<void> {
  for (const statement of statements) await tx.run(statement);
}

/** An INSERT of the columns `row` names (those not undefined), in their order. */
export function insertInto(table: string, row: Record<string, unknown>): Prisma.Sql {
  const columns = Object.keys(row).filter((column) => row[column] !== undefined);
  return Prisma.sql`INSERT INTO ${Prisma.raw(`"${table}"`)} (${Prisma.raw(columns.map((c) => `"${c}"`).join(', '))})
    VALUES (${Prisma.join(columns.map((c) => row[c] as Prisma.Sql))})`;
}

// Column readers: SQLite gives integers as bigint (the adapter's connection reads them safely),
// booleans as 0/1 and timestamps as text; PostgreSQL gives int8 as bigint (above), booleans and
// Dates.

export function bigintOf(value: unknown): bigint {
  return typeof value === 'bigint' ? value : BigInt(value as number | string);
}

export function bigintOrNull(value: unknown): bigint | null {
  return value === null || value === undefined ? null : bigintOf(value);
}

export function booleanOf(value: unknown): boolean {
  return value === true || value === 1 || value === 1n;
}

/** SQLite's own `CURRENT_TIMESTAMP` form (a column default): UTC, without saying so. */
const SQLITE_CURRENT_TIMESTAMP = /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(\.\d+)?$/;

export function dateOf(value: unknown): Date {
  if (value instanceof Date) return value;
  if (typeof value === 'bigint' || typeof value === 'number') return new Date(Number(value));
  const text = String(value);
  return new Date(SQLITE_CURRENT_TIMESTAMP.test(text) ? `${text.replace(' ', 'T')}Z` : text);
}

export function dateOrNull(value: unknown): Date | null {
  return value === null || value === undefined ? null : dateOf(value);
}
