import { PrismaBetterSqlite3 } from '@prisma/adapter-better-sqlite3';
import Database from 'better-sqlite3';
import t from 'tap';
import { cacheStatements, withStatementCache } from '../../../control-plane/db/statement-cache.js';
import { newId } from '../../../shared/ids.js';
import { createTestDatabase } from '../../helpers/database.js';

// Statements the ORM's adapter prepares are kept per SQL text and used with other arguments.
t.test('a kept statement answers as a fresh one, with each run’s own arguments', async (t) => {
  const database = new Database(':memory:');
  t.teardown(() => database.close());
  database.defaultSafeIntegers(true);
  let prepared = 0;
  const prepare = database.prepare.bind(database);
  database.prepare = ((sql: string) => (prepared++, prepare(sql))) as typeof database.prepare;
  cacheStatements(database);

  database.prepare('CREATE TABLE t (id TEXT PRIMARY KEY, n INTEGER)').bind([]).run();
  const insert = 'INSERT INTO t (id, n) VALUES (?, ?)';
  t.same(database.prepare(insert).bind(['a', 1]).run(), { changes: 1, lastInsertRowid: 1n });
  t.same(database.prepare(insert).bind(['b', 2]).run(), { changes: 1, lastInsertRowid: 2n });
  t.throws(() => database.prepare(insert).bind(['a', 3]).run(), { code: 'SQLITE_CONSTRAINT_PRIMARYKEY' });

  const select = 'SELECT id, n FROM t WHERE n >= ? ORDER BY id';
  const view = database.prepare(select).bind([2]);
  t.equal(view.reader, true);
  t.same(
    view.columns().map((c) => c.name),
    ['id', 'n'],
  );
  t.same(view.raw().all(), [['b', 2n]]);
  t.same(
    database.prepare(select).bind([0]).all(),
    [
      { id: 'a', n: 1n },
      { id: 'b', n: 2n },
    ],
    'raw only for the view that asked',
  );
  t.equal(database.prepare(insert).reader, false);
  t.throws(() => database.prepare(insert).raw(), TypeError, 'raw rows of a statement that returns none, refused as before');
  t.equal(prepared, 3, 'each SQL text prepared once');
  t.throws(() => database.prepare('SELECT nope FROM t'), /no such column/);
});

t.test('the adapter’s connection keeps its statements', async (t) => {
  const adapter = await withStatementCache(new PrismaBetterSqlite3({ url: ':memory:' })).connect();
  t.teardown(() => adapter.dispose());
  const client = (adapter as unknown as { client: Database.Database }).client;
  t.not(client.prepare, Database.prototype.prepare, 'prepare answers from the kept statements');
  const query = { sql: 'SELECT ? AS n', args: [1], argTypes: [{ scalarType: 'int' as const, arity: 'scalar' as const }] };
  t.match(await adapter.queryRaw(query), { columnNames: ['n'], rows: [[1]] });
  t.match(await adapter.queryRaw({ ...query, args: [2] }), { columnNames: ['n'], rows: [[2]] }, 'the same statement, other arguments');
});

t.test('the ORM runs on kept statements', async (t) => {
  const { db } = await createTestDatabase(t, 'sqlite');
  const id = newId('organization');
  await db.organization.create({ data: { id, name: 'Acme' } });
  for (const name of ['B', 'C']) await db.organization.update({ where: { id }, data: { name } });
  t.equal((await db.organization.findUniqueOrThrow({ where: { id } })).name, 'C');
  await db.$transaction(async (tx) => {
    await tx.organization.update({ where: { id }, data: { name: 'D' } });
  });
  await t.rejects(
    db.$transaction(async (tx) => {
      await tx.organization.update({ where: { id }, data: { name: 'E' } });
      throw new Error('rolled back');
    }),
  );
  t.equal((await db.organization.findUniqueOrThrow({ where: { id } })).name, 'D');
});
