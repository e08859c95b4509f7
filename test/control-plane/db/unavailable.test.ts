import { connect, createServer, type Socket } from 'node:net';
import t from 'tap';
import { openDatabase } from '../../../control-plane/db/client.js';
import { unavailableDatabase } from '../../../control-plane/db/unavailable.js';
import { createControlPlaneServer } from '../../../control-plane/server.js';
import { closeServer, listen } from '../../../runtime/http-server.js';
import { startTestControlPlane } from '../../helpers/control-plane.js';
import { managementClient } from '../../helpers/management.js';
import { usageWorld } from '../../helpers/usage-world.js';

// A database that goes away under a running control-plane (the network between them cut, the
// server restarted) is the database's failure, not the request's and not hub's: every route
// answers 503 service_unavailable with a time to come back, never a 500, and /readyz says so.
// PostgreSQL only: an SQLite file cannot go away this way.

/** A TCP forwarder to PostgreSQL that can be cut: open connections dropped, new ones refused. */
async function cuttableLink(t: Tap, target: URL) {
  const sockets = new Set<Socket>();
  let cut = false;
  const server = createServer((client) => {
    if (cut) return void client.destroy();
    const upstream = connect(Number(target.port || 5432), target.hostname);
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on('error', () => {});
      s.on('close', () => {
        sockets.delete(s);
        client.destroy();
        upstream.destroy();
      });
    }
    client.pipe(upstream).pipe(client);
  });
  const port = await listen(server as never, 0, '127.0.0.1');
  t.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return {
    port,
    cut: () => {
      cut = true;
      for (const s of sockets) s.destroy();
    },
    /** The server is back: new connections go through again. */
    restore: () => {
      cut = false;
    },
  };
}
type Tap = { teardown: (fn: () => unknown) => void };

t.test(
  'a database that goes away is 503 with a time to come back, on every kind of route',
  { skip: !process.env.HUB_TEST_PG_URL },
  async (t) => {
    const cp = await startTestControlPlane(t, 'postgresql');
    const { apiKey } = await cp.bootstrap();
    const target = new URL(cp.config.database.url);
    const link = await cuttableLink(t, target);
    const through = new URL(target);
    through.port = String(link.port);

    // A replica whose connections run through the link (its workers are the first one's).
    const opened = await openDatabase({ ...cp.config.database, url: through.toString() }, { poolSize: 2 });
    t.teardown(() => opened.close().catch(() => {}));
    const server = createControlPlaneServer({ ...cp, db: opened.db });
    const port = await listen(server, 0, '127.0.0.1');
    t.teardown(() => closeServer(server, 1_000));
    const api = managementClient(`http://127.0.0.1:${port}`);

    t.equal((await api.get('/v1/sellers', apiKey)).status, 200, 'serving through the link');
    link.cut();

    const answers = {
      'a REST read': await api.get('/v1/sellers', apiKey),
      'a REST write': await api.post('/v1/sellers', apiKey, { name: 'x', slug: 'x', upstreamBaseUrl: 'https://api.example.com' }),
      'a usage check': await api.post('/v1/usage/check', apiKey, {
        zcRequestId: 'hubreq_000000000000000000000000',
        serviceSlug: 'search',
        usage: [{ meterSlug: 'calls', quantity: 1 }],
      }),
    };
    for (const [what, reply] of Object.entries(answers)) {
      t.equal(reply.status, 503, `${what}: 503`);
      t.match(reply.body, { error: 'service_unavailable', retryAfterSeconds: 1 }, `${what}: the envelope, with when to retry`);
      t.equal(reply.headers.get('retry-after'), '1', `${what}: and Retry-After`);
    }
    const ready = await fetch(`http://127.0.0.1:${port}/readyz`);
    t.same([ready.status, await ready.json()], [503, { status: 'database_unreachable' }], '/readyz says why');
  },
);

t.test('a lock or a timeout lost on the SQL lane is 503 too, as through the ORM', async (t) => {
  // The lane (db/sql.ts) throws the driver's own error, PostgreSQL's SQLSTATE in `code`.
  const driverError = (code: string, message: string) => Object.assign(new Error(message), { code });
  const lost: [string, string][] = [
    ['57014', 'canceling statement due to statement timeout'],
    ['40P01', 'deadlock detected'],
    ['55P03', 'could not obtain lock on row in relation "Access"'],
  ];
  for (const [code, message] of lost) {
    t.match(unavailableDatabase(driverError(code, message)), { code: 'service_unavailable' }, code);
  }
  t.equal(unavailableDatabase(driverError('23505', 'duplicate key value violates unique constraint')), undefined, 'a refusal is not');
});

t.test(
  'PostgreSQL restarted under load: hub reconnects, and every report is recorded exactly once',
  { skip: !process.env.HUB_TEST_PG_URL },
  async (t) => {
    const w = await usageWorld(t, 'postgresql');
    const agentId = await w.agent();
    const accessId = await w.access({ agentId, balanceMicros: 1_000_000n });
    const zcRequestId = await w.request({ agentId });
    const target = new URL(w.cp.config.database.url);
    const link = await cuttableLink(t, target);
    const through = new URL(target);
    through.port = String(link.port);
    const opened = await openDatabase({ ...w.cp.config.database, url: through.toString() }, { poolSize: 4 });
    t.teardown(() => opened.close().catch(() => {}));
    const server = createControlPlaneServer({ ...w.cp, db: opened.db });
    const port = await listen(server, 0, '127.0.0.1');
    t.teardown(() => closeServer(server, 1_000));
    const api = managementClient(`http://127.0.0.1:${port}`);
    const report = (key: string) =>
      api.post('/v1/usage', w.boot.apiKey, {
        idempotencyKey: key,
        zcRequestId,
        serviceSlug: 'forecast',
        usage: [{ meterSlug: 'requests', quantity: 1 }],
      });
    const keys = Array.from({ length: 60 }, (_, i) => `restart-${i}`);

    // Under load: twenty reports at a time, the database cut while the second twenty are under way.
    const first = await Promise.all(keys.slice(0, 20).map(report));
    t.same(new Set(first.map((r) => r.status)), new Set([200]), 'served through the link');
    const during = Promise.all(keys.slice(20, 40).map(report));
    await new Promise((resolve) => setImmediate(resolve));
    link.cut();
    const gap = [...(await during), ...(await Promise.all(keys.slice(40).map(report)))];
    const statuses = new Set(gap.map((r) => r.status));
    t.ok(
      [...statuses].every((s) => s === 200 || s === 503),
      `each answered or refused clearly: ${[...statuses]}`,
    );
    t.ok(
      gap.filter((r) => r.status === 503).every((r) => r.body.error === 'service_unavailable'),
      'a refusal is the envelope with when to retry',
    );
    t.ok(
      gap.some((r) => r.status === 503),
      'the gap was felt',
    );

    link.restore();
    let back = false;
    for (let tries = 0; !back && tries < 100; tries++) {
      back = (await api.get('/v1/sellers', w.boot.apiKey)).status === 200;
      if (!back) await new Promise((resolve) => setTimeout(resolve, 100));
    }
    t.ok(back, 'hub reconnects by itself');

    // Every report sent again: one that was recorded says so, one that was not is recorded now.
    const again = await Promise.all(keys.map(report));
    t.same(new Set(again.map((r) => r.status)), new Set([200]));
    const recordedBefore = again.filter((r) => r.body.duplicate === true).length;
    t.ok(recordedBefore >= 20, `the reports answered before the gap (and any the gap did not stop) were kept: ${recordedBefore}`);
    t.equal(await w.db.usageEvent.count({ where: { requestId: zcRequestId } }), 60, 'one event per key, none lost, none doubled');
    // 10 requests included, then $0.001 each: 50 paid, whichever reports they were.
    t.equal(await w.balance(accessId), 1_000_000n - 50_000n, 'credit taken exactly once per report');
  },
);
