import type { SqlMigrationAwareDriverAdapterFactory } from '@prisma/driver-adapter-utils';
import type { Database, Statement } from 'better-sqlite3';
import { patchSqliteClient } from './sqlite-client.js';

/**
 * Prepared statements kept per SQL text on the ORM's SQLite connection. Prisma's better-sqlite3
 * adapter prepares every statement it runs afresh (`client.prepare(sql).bind(args)`), and SQLite
 * parsing and planning it again cost about as much as running one of the simple statements a
 * paid call is made of. Statements are kept here, most recently used last, and handed to the
 * adapter as views that bind their arguments per run (a better-sqlite3 statement can be bound
 * for good only once). SQLite prepares a kept statement again by itself if the schema changes.
 */
const KEPT = 500;

export function withStatementCache(factory: SqlMigrationAwareDriverAdapterFactory): SqlMigrationAwareDriverAdapterFactory {
  return patchSqliteClient(factory, cacheStatements);
}

/** Makes `database.prepare` answer from kept statements. */
export function cacheStatements(database: Database): void {
  const prepare = database.prepare.bind(database) as (sql: string) => Statement<unknown[]>;
  const kept = new Map<string, Statement<unknown[]>>();
  database.prepare = ((sql: string) => {
    let statement = kept.get(sql);
    if (statement) kept.delete(sql);
    else statement = prepare(sql);
    kept.set(sql, statement);
    if (kept.size > KEPT) kept.delete(kept.keys().next().value!);
    return new StatementView(statement);
  }) as unknown as Database['prepare'];
}

const columnsOf = new WeakMap<Statement<unknown[]>, ReturnType<Statement['columns']>>();

/**
 * What the adapter uses of a statement, with arguments bound for one run instead of for good, and
 * raw rows (arrays) asked for per view, since the statement underneath is shared.
 */
class StatementView {
  private rawRows = false;

  constructor(
    private readonly statement: Statement<unknown[]>,
    private readonly args: unknown[] = [],
  ) {}

  get reader(): boolean {
    return this.statement.reader;
  }

  bind(...args: unknown[]): StatementView {
    return new StatementView(this.statement, args);
  }

  raw(toggle = true): StatementView {
    // Throws, as better-sqlite3 does, for a statement that returns no data.
    if (!this.statement.reader) this.statement.raw(toggle);
    this.rawRows = toggle;
    return this;
  }

  columns() {
    // Asked on every run; the statement's columns are fixed once it is prepared.
    const kept = columnsOf.get(this.statement);
    if (kept) return kept;
    const columns = this.statement.columns();
    columnsOf.set(this.statement, columns);
    return columns;
  }

  run() {
    return this.statement.run(...this.args);
  }

  get() {
    return this.rows().get(...this.args);
  }

  all() {
    return this.rows().all(...this.args);
  }

  private rows(): Statement<unknown[]> {
    return this.statement.raw(this.rawRows);
  }
}
