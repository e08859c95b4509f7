import t from 'tap';
import { openDatabase } from '../../../control-plane/db/client.js';
import { rateLimit, SharedRateWindow } from '../../../control-plane/limits/shared-rate-window.js';
import { RateWindow } from '../../../runtime/rate-window.js';
import { createTestDatabase, testProviders } from '../../helpers/database.js';

// A rate limit on PostgreSQL is shared by every control-plane on the database; on SQLite (one
// process's database) it is counted in memory.

t.test('on SQLite the limit is one process’s, in memory', async (t) => {
  const { db } = await createTestDatabase(t, 'sqlite');
  t.type(rateLimit(db, 'agentify', 60), RateWindow);
  t.equal(rateLimit(db, 'agentify', 60), rateLimit(db, 'agentify', 60), 'one per database and name');
});

if (testProviders().includes('postgresql')) {
  t.test('on PostgreSQL two replicas count toward one limit', async (t) => {
    const { db, database } = await createTestDatabase(t, 'postgresql');
    const other = await openDatabase(database, { poolSize: 2 });
    t.teardown(() => other.close());
    t.type(rateLimit(db, 'agentify', 60), SharedRateWindow);

    const minute = 60_000;
    const now = Math.floor(Date.now() / minute) * minute + 1_000;
    const options = { windowMs: minute, syncMs: 60_000 };
    const [a, b] = [new SharedRateWindow(db, 'test', 10, options), new SharedRateWindow(other.db, 'test', 10, options)];
    const taken = (limit: SharedRateWindow, n: number) =>
      Array.from({ length: n }, () => limit.take('org_1', now)).filter((answer) => answer === undefined).length;

    t.equal(taken(a, 6), 6, 'one replica takes six');
    await a.sync(now);
    t.equal(b.take('org_1', now), undefined, 'the other, knowing nothing of the key yet, lets one through');
    await b.sync(now);
    t.equal(taken(b, 6), 3, 'then knows of the six and takes the three left');
    t.equal(a.take('org_1', now), undefined, 'before it hears of them, the first lets one more through');
    await b.sync(now);
    await a.sync(now);
    t.equal(a.take('org_1', now), 59, 'then refuses, until the window turns');
    t.equal(b.take('org_2', now), undefined, 'each key counts apart');
    t.equal(taken(a, 3), 0);

    const alone = new SharedRateWindow(db, 'alone', 5, options);
    t.equal(taken(alone, 5), 5);
    const passing = alone.sync(now);
    t.equal(alone.take('org_1', now), 59, 'while its counts are being added, the process still counts them');
    await passing;
    t.equal(alone.take('org_1', now), 59, 'and once they are');

    const next = now + minute;
    t.equal(taken(a, 3), 0, 'within the window still none');
    t.equal(
      Array.from({ length: 3 }, () => a.take('org_1', next)).filter((answer) => answer === undefined).length,
      3,
      'a new window starts from nothing',
    );
    await a.sync(next);
    t.same(
      (await db.rateCount.findMany({ where: { name: 'test', key: 'org_1' } })).map((row) => row.count),
      [3],
      'the past window’s rows are gone',
    );
  });
}
