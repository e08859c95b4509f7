import t from 'tap';
import { createApiKey } from '../../control-plane/auth/credentials.js';
import { closeServer } from '../../runtime/http-server.js';
import { createPageViewReporter, type PageViewFailure, type PageViewReporter, type PageViewReporterOptions } from '../../sdk/index.js';
import { injectFaults } from '../helpers/faults.js';
import { type PageViewHub, pageViewHub, startSite, visit } from '../helpers/page-view-sites.js';
import { until } from '../helpers/row-locks.js';

// The page-view reporter when hub does not take a view (spec: Page-view rules: reporting is fire and
// forget, a failure is a no-op): hub stopped, slow, answering 5xx or garbage (faults injected with
// nock in front of a real control-plane), rate limiting, refusing the key or the seller. The
// seller's site answers as it would without the reporter, nothing throws, no promise is left
// rejected, and every view is accounted for.

const unhandled: unknown[] = [];
process.on('unhandledRejection', (reason) => unhandled.push(reason));

function reporterFor(t: Tap, hub: PageViewHub, options: Partial<PageViewReporterOptions> = {}) {
  const failures: PageViewFailure[] = [];
  const reporter = createPageViewReporter({
    baseUrl: hub.cp.url,
    apiKey: hub.apiKey,
    seller: hub.sellerId,
    onFailure: (failure) => failures.push(failure),
    ...options,
  });
  t.teardown(() => reporter.close({ timeoutMs: 100 }));
  return { reporter, failures };
}
type Tap = { teardown: (fn: () => unknown) => void };

/** Polls (5 s at most) until `count` views have been through the reporter, sent or not. */
function settled(reporter: PageViewReporter, count: number): Promise<void> {
  return until(() => {
    const s = reporter.stats();
    return s.pending === 0 && s.sending === 0 && s.sent + s.failed + s.dropped + s.invalid >= count;
  }, `${count} views through the reporter`);
}

/** A request to hub held until `release()`: hub, slow. */
function holdPageViews(t: Tap, hub: PageViewHub, times: number) {
  let release!: () => void;
  const held = new Promise<void>((resolve) => (release = resolve));
  let arrived = 0;
  injectFaults(t, hub.cp.url)
    .scope.post('/v1/page-views')
    .times(times)
    .reply(async () => {
      arrived++;
      await held;
      return [204];
    });
  t.teardown(() => release());
  return { release, arrived: () => arrived };
}

t.test('hub stopped: the site serves on, every view fails quietly and is counted', async (t) => {
  const hub = await pageViewHub(t);
  const { reporter, failures } = reporterFor(t, hub);
  const { port } = await startSite(t, 'node', reporter);
  await visit(port, '/node/docs?while=up');
  await settled(reporter, 1);
  t.equal((await hub.views()).length, 1, 'reported while hub ran');

  await closeServer(hub.cp.server, 0);
  for (let i = 0; i < 5; i++) {
    const page = await visit(port, `/node/docs?while=down&i=${i}`);
    t.equal(page.status, 200, 'served as ever');
  }
  await settled(reporter, 6);
  t.same(reporter.stats(), { pending: 0, sending: 0, sent: 1, failed: 5, dropped: 0, invalid: 0 });
  t.same(
    failures.map((f) => [f.reason, f.path]),
    Array(5).fill(['unreachable', '/node/docs']),
  );
  await t.resolves(reporter.flush(), 'flush resolves with hub down');
  t.same(await reporter.close(), reporter.stats());
});

t.test('hub slow: pages are answered at once, views time out, and close() does not wait for ever', async (t) => {
  const hub = await pageViewHub(t);
  const slow = holdPageViews(t, hub, 3);
  const { reporter, failures } = reporterFor(t, hub, { timeoutMs: 150 });
  const { port } = await startSite(t, 'express', reporter);
  const page = await visit(port, '/express/docs');
  t.equal(page.status, 200);
  await until(() => slow.arrived() === 1, 'the view reached hub');
  t.match(reporter.stats(), { sending: 1, sent: 0 }, 'the page was answered while its view waits on hub');
  await settled(reporter, 1);
  t.same(failures, [{ reason: 'timeout', path: '/express/docs' }]);

  // A view in flight when close() runs out of time is aborted; one still queued is dropped.
  const patient = reporterFor(t, hub, { timeoutMs: 60_000, concurrency: 1 });
  patient.reporter.report({ path: '/held' });
  patient.reporter.report({ path: '/queued' });
  await until(() => slow.arrived() === 2, 'the second view reached hub');
  const started = Date.now();
  const final = await patient.reporter.close({ timeoutMs: 100 });
  t.ok(Date.now() - started < 2_000, 'close() kept to its time');
  t.same(final, { pending: 0, sending: 0, sent: 0, failed: 1, dropped: 1, invalid: 0 });
  t.same(patient.failures, [{ reason: 'aborted', path: '/held' }]);
  slow.release();
});

t.test('hub answering 5xx or garbage: rejected views, counted, and the next view goes through', async (t) => {
  const hub = await pageViewHub(t);
  const faults = injectFaults(t, hub.cp.url);
  faults.scope
    .post('/v1/page-views')
    .reply(503, '<html>bad gateway</html>', { 'content-type': 'text/html' })
    .post('/v1/page-views')
    .reply(500, { error: 'Internal server error' })
    .post('/v1/page-views')
    .reply(200, 'not json at all');
  const { reporter, failures } = reporterFor(t, hub, { concurrency: 1 });
  for (const path of ['/a', '/b', '/c']) reporter.report({ path });
  await reporter.flush();
  faults.end();
  reporter.report({ path: '/d' });
  await reporter.flush();
  t.same(failures, [
    { reason: 'rejected', path: '/a', status: 503 },
    { reason: 'rejected', path: '/b', status: 500, error: 'Internal server error' },
  ]);
  t.same(reporter.stats(), { pending: 0, sending: 0, sent: 2, failed: 2, dropped: 0, invalid: 0 }, 'a 2xx is taken, whatever its body');
  t.same(
    (await hub.views()).map((v) => v.path),
    ['/d'],
    'the view after the faults reached the real hub',
  );
});

t.test("hub's rate limit: sending pauses as long as hub asks, views wait or are dropped", async (t) => {
  const hub = await pageViewHub(t, { HUB_PAGE_VIEWS_PER_MINUTE: '2' });
  const { reporter, failures } = reporterFor(t, hub, { concurrency: 1, maxQueue: 2 });
  for (const path of ['/1', '/2', '/3', '/4', '/5', '/6']) reporter.report({ path });
  // /1 on its way, /2 and /3 waiting, the rest dropped: the queue holds two.
  t.match(reporter.stats(), { sending: 1, pending: 2, dropped: 3 });
  await until(() => reporter.stats().failed === 1, 'the 429');
  t.same(failures, [{ reason: 'rate_limited', path: '/3', status: 429, error: 'rate_limited' }]);
  t.match(reporter.stats(), { sent: 2, sending: 0, pending: 0 });
  reporter.report({ path: '/7' });
  t.match(reporter.stats(), { sending: 0, pending: 1 }, 'held while hub says to wait');
  t.same(await reporter.close({ timeoutMs: 50 }), { pending: 0, sending: 0, sent: 2, failed: 1, dropped: 4, invalid: 0 });
  t.same((await hub.views()).map((v) => v.path).sort(), ['/1', '/2']);
});

t.test('after the pause hub asked for, the views that waited are sent', async (t) => {
  const hub = await pageViewHub(t);
  const faults = injectFaults(t, hub.cp.url);
  faults.scope.post('/v1/page-views').reply(429, { error: 'rate_limited' }, { 'retry-after': '1' });
  const { reporter, failures } = reporterFor(t, hub, { concurrency: 1 });
  const asked = Date.now();
  for (const path of ['/limited', '/waited']) reporter.report({ path });
  await until(() => reporter.stats().failed === 1, 'the 429');
  faults.end();
  t.match(reporter.stats(), { pending: 1, sending: 0 }, 'held');
  await reporter.flush();
  t.ok(Date.now() - asked >= 900, 'not before the second the Retry-After header asked for');
  t.same(failures, [{ reason: 'rate_limited', path: '/limited', status: 429, error: 'rate_limited' }]);
  t.same(
    (await hub.views()).map((v) => v.path),
    ['/waited'],
  );
});

t.test('a key without page-views:write, a seller of another organization: rejected with hub’s code', async (t) => {
  const hub = await pageViewHub(t);
  const usageOnly = await createApiKey(hub.cp.db, {
    organizationId: (await hub.cp.db.seller.findUniqueOrThrow({ where: { id: hub.sellerId } })).organizationId,
    name: 'usage',
    scopes: ['usage:read'],
  });
  const wrongScope = reporterFor(t, hub, { apiKey: usageOnly.key });
  wrongScope.reporter.report({ path: '/scope' });
  await wrongScope.reporter.flush();
  t.same(wrongScope.failures, [{ reason: 'rejected', path: '/scope', status: 403, error: 'insufficient_scope' }]);

  const other = await pageViewHub(t);
  const foreign = reporterFor(t, hub, { seller: other.sellerId });
  foreign.reporter.report({ path: '/foreign' });
  await foreign.reporter.flush();
  t.same(foreign.failures, [{ reason: 'rejected', path: '/foreign', status: 404, error: 'seller_not_found' }]);
});

t.test('a failure hook that throws changes nothing', async (t) => {
  const hub = await pageViewHub(t);
  await closeServer(hub.cp.server, 0);
  const reporter = createPageViewReporter({
    baseUrl: hub.cp.url,
    apiKey: hub.apiKey,
    seller: hub.sellerId,
    onFailure: () => {
      throw new Error('the seller’s hook is broken');
    },
  });
  const { port } = await startSite(t, 'fastify', reporter);
  t.equal((await visit(port, '/fastify/docs')).status, 200);
  await settled(reporter, 1);
  t.match(await reporter.close(), { failed: 1 });
});

t.test('no promise was left rejected', async (t) => {
  t.same(unhandled, []);
});
