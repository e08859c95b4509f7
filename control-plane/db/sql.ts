import type { Database } from 'better-sqlite3';
import pg from 'pg';
import { Prisma } from '../../generated/prisma/sqlite/client.js';
import type { DatabaseConfig } from '../../shared/config.js';
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
  const encode = (value: unknown) =>
    value instanceof Date ? sqliteTimestamp(value) : typeof value === 'boolean' ? (value ? 1 : 0) : value;
  const statement = (database: Database, query: Prisma.Sql) => database.prepare(query.sql).bind(...query.values.map(encode));
  const on = (database: Database): Sql => ({
    all: async <Row>(query: Prisma.Sql) => statement(database, query).all() as Row[],
    get: async <Row>(query: Prisma.Sql) => statement(database, query).get() as Row | undefined,
    run: async (query) => statement(database, query).run().changes,
  });
  const alone = <T>(work: (lane: Sql) => Promise<T>) => {
    const { database, exclusive } = turns();
    return exclusive(() => work(on(database)));
  };
  return {
    provider: 'sqlite',
    all: (query) => alone((lane) => lane.all(query)),
    get: (query) => alone((lane) => lane.get(query)),
    run: (query) => alone((lane) => lane.run(query)),
    transaction: (work) => {
      const { database, exclusive } = turns();
      return exclusive(async () => {
        // IMMEDIATE: the write lock is taken now, not at the first write, so another process's
        // writer cannot make this transaction fail halfway.
        database.prepare('BEGIN IMMEDIATE').run();
        try {
          const result = await work(on(database));
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

/** PostgreSQL, on the ORM's pool: a transaction holds one pooled connection until it ends. */
export function postgresSql(pool: pg.Pool): SqlDatabase {
  const encode = (value: unknown) => (value instanceof Date ? value.toISOString() : typeof value === 'bigint' ? value.toString() : value);
  const on = (client: pg.Pool | pg.PoolClient): Sql => {
    const query = (q: Prisma.Sql) => client.query({ text: q.text, values: q.values.map(encode), types: pgTypes });
    return {
      all: async <Row>(q: Prisma.Sql) => (await query(q)).rows as Row[],
      get: async <Row>(q: Prisma.Sql) => (await query(q)).rows[0] as Row | undefined,
      run: async (q) => (await query(q)).rowCount ?? 0,
    };
  };
  return {
    provider: 'postgresql',
    ...on(pool),
    transaction: async (work) => {
      const client = await pool.connect();
      try {
        await client.query('BEGIN');
        const result = await work(on(client));
        await client.query('COMMIT');
        return result;
      } catch (err) {
        await client.query('ROLLBACK').catch(() => {});
        throw err;
      } finally {
        client.release();
      }
    },
  };
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

export function dateOf(value: unknown): Date {
  return value instanceof Date ? value : new Date(value as string);
}

export function dateOrNull(value: unknown): Date | null {
  return value === null || value === undefined ? null : dateOf(value);
}
