import t from 'tap';
import { createApiKey } from '../../control-plane/auth/credentials.js';
import { createSellerApp } from '../../examples/seller/app.js';
import { closeServer } from '../../runtime/http-server.js';
import {
  type AllowanceOutageEvent,
  type AllowanceOutagePolicy,
  createUsageClient,
  parseUsageHeader,
  type UsageClient,
  type UsageClientOptions,
} from '../../sdk/index.js';
import { newRequestId } from '../../shared/ids.js';
import { injectFaults } from '../helpers/faults.js';
import { until } from '../helpers/row-locks.js';
import { onLoopback, secrets, send } from '../helpers/signed-request.js';
import { usageWorld } from '../helpers/usage-world.js';

// The usage client's allowance-outage policy, through the reference seller (examples/seller) over
// HTTP, against a real control-plane: faults (5xx, 429, garbage, no answer in time, a broken
// connection) are injected with nock in front of it, and at the end it is stopped for real.
// spec: Bodies the seller's API returns to the service (503 allowance_unavailable under a
// fail-closed outage policy); Endpoints › Usage check, Usage report.

const world = await usageWorld(t, 'sqlite');
const hubUrl = world.cp.url;
const serviceSlug = 'forecast';
const meters = [{ meterSlug: 'requests', quantity: 1 }];

/** A call hub allows: an agent with credit on the credit plan, and the request the proxy recorded for it. */
async function allowedCall() {
  const agentId = await world.agent();
  await world.access({ agentId });
  return { agentId, requestId: await world.request({ agentId }) };
}

/** The reference seller with a usage client of the given policy; the client's outage events collected. */
async function sellerWith(policy: AllowanceOutagePolicy | undefined, options: Partial<UsageClientOptions> = {}) {
  const events: AllowanceOutageEvent[] = [];
  const usage: UsageClient = createUsageClient({
    baseUrl: hubUrl,
    apiKey: world.boot.apiKey,
    ...(policy ? { allowanceOutage: policy } : {}),
    onOutage: (event) => events.push(event),
    ...options,
  });
  t.teardown(() => usage.close({ timeoutMs: 100 }));
  const app = createSellerApp({ secrets, hub: { baseUrl: hubUrl, apiKey: world.boot.apiKey }, usage, serviceSlug, meters });
  const port = await onLoopback(app);
  t.teardown(() => closeServer(app, 100));
  return { port, usage, events, types: () => events.map((e) => e.type) };
}

let endSlowness!: () => void;
const stillSlow = new Promise<void>((resolve) => (endSlowness = resolve));
t.teardown(() => endSlowness());

/** Every way hub's usage API can be unavailable, as nock faults for `path`. */
const OUTAGES: [string, (scope: ReturnType<typeof injectFaults>['scope'], path: string) => void][] = [
  ['a 503 page', (scope, path) => scope.post(path).reply(503, '<html>bad gateway</html>', { 'content-type': 'text/html' })],
  ['a 500', (scope, path) => scope.post(path).reply(500, { error: 'Internal server error' })],
  ['a 429', (scope, path) => scope.post(path).reply(429, { error: 'rate_limited', retryAfterSeconds: 30 })],
  ['a 200 that is not JSON', (scope, path) => scope.post(path).reply(200, '<html>captive portal</html>')],
  ['a 200 of another shape', (scope, path) => scope.post(path).reply(200, { allowed: 'yes', id: 7 })],
  ['a broken connection', (scope, path) => scope.post(path).replyWithError({ code: 'ECONNRESET', message: 'socket hang up' })],
];

/** hub, slow: no answer to `path` before the client's timeout is up (held until the file ends). */
function slowHub(scope: ReturnType<typeof injectFaults>['scope'], path: string): void {
  scope.post(path).reply(async () => {
    await stillSlow;
    return [200, { allowed: true, reason: null }];
  });
}

t.test('failClosed, the default: served as ever while hub answers, 503 allowance_unavailable while it does not', async (t) => {
  const seller = await sellerWith(undefined);
  const call = await allowedCall();
  const served = await send(seller.port, { path: '/metered', ...call });
  t.equal(served.status, 200);
  t.same(parseUsageHeader(served.headers['hub-usage']), { ok: true, items: [{ serviceSlug, ...meters[0]! }] });
  t.notOk(served.json.allowanceOutage);
  const unpaid = await send(seller.port, { path: '/metered', requestId: newRequestId(false) });
  t.same([unpaid.status, unpaid.json], [402, { error: 'payment_required', serviceSlug, usage: meters }], 'a denial is still a 402');

  for (const [name, fault] of OUTAGES) {
    const faults = injectFaults(t, hubUrl);
    fault(faults.scope, '/v1/usage/check');
    const refused = await send(seller.port, { path: '/metered', ...(await allowedCall()) });
    faults.end();
    t.same([refused.status, refused.json], [503, { error: 'allowance_unavailable' }], name);
    t.equal(refused.headers['hub-usage'], undefined, `${name}: nothing served, nothing settled`);
  }
  t.same(seller.types(), Array(OUTAGES.length).fill('check_refused'));
  t.match(seller.events[0], { error: { name: 'AllowanceUnavailableError', code: 'allowance_unavailable', status: 503 } });
  t.match(seller.usage.outages(), { checksRefused: OUTAGES.length, checksLetThrough: 0 });

  // A report that cannot be made is refused too: the seller serves nothing it cannot bill.
  const faults = injectFaults(t, hubUrl);
  faults.scope.post('/v1/usage/check').reply(200, { allowed: true, reason: null });
  faults.scope.post('/v1/usage').reply(502, 'bad gateway');
  const unreported = await send(seller.port, { method: 'POST', path: '/metered/report', ...(await allowedCall()) });
  faults.end();
  t.same([unreported.status, unreported.json], [503, { error: 'allowance_unavailable' }]);
  t.equal(seller.types().at(-1), 'report_refused');

  const after = await send(seller.port, { path: '/metered', ...(await allowedCall()) });
  t.equal(after.status, 200, 'and once hub answers again, calls are served again');
});

t.test('failOpen: served and flagged while hub is down; the report is kept and delivered once hub answers', async (t) => {
  const seller = await sellerWith('failOpen', { retryDelayMs: 60_000 });
  for (const [name, fault] of OUTAGES) {
    const faults = injectFaults(t, hubUrl);
    fault(faults.scope, '/v1/usage/check');
    const served = await send(seller.port, { path: '/metered', requestId: newRequestId(false) });
    faults.end();
    t.equal(served.status, 200, `${name}: let through`);
    t.match(served.json, { served: true, allowanceOutage: true });
    t.ok(served.headers['hub-usage'], `${name}: and settled by the hub-usage header as any served call`);
  }
  t.same(seller.types(), Array(OUTAGES.length).fill('check_let_through'));

  // The check and the report both meet an outage: the call is served, its report kept.
  const call = await allowedCall();
  const faults = injectFaults(t, hubUrl);
  faults.scope.post('/v1/usage/check').reply(503, 'down');
  faults.scope.post('/v1/usage').reply(503, 'down');
  const served = await send(seller.port, { method: 'POST', path: '/metered/report', ...call });
  faults.end();
  t.equal(served.status, 200);
  t.match(served.json, { served: true, allowanceOutage: true, report: { ok: true, queued: true } });
  t.match(seller.usage.outages(), { reportsQueued: 1, reportsWaiting: 1, reportsDelivered: 0 });
  t.same(await world.events(call.requestId), [], 'hub has no record of it yet');

  // hub answers the next call: the kept report goes at once, not at the next retry a minute away.
  t.equal((await send(seller.port, { path: '/metered', ...(await allowedCall()) })).status, 200);
  await until(() => seller.usage.outages().reportsDelivered === 1, 'the kept report delivered');
  const delivered = seller.events.find((e) => e.type === 'report_delivered');
  t.match(delivered, { request: { idempotencyKey: call.requestId }, result: { ok: true, duplicate: false, id: /^use_/ } });
  t.equal((await world.events(call.requestId)).length, 1, 'hub recorded the usage once');
  t.match(seller.usage.outages(), { reportsWaiting: 0 });
});

t.test('failOpen: kept reports are retried on their own, and a retry of one hub had is a duplicate, not a second charge', async (t) => {
  const seller = await sellerWith('failOpen', { retryDelayMs: 50, retryMaxDelayMs: 200 });
  const call = await allowedCall();
  const report = { idempotencyKey: call.requestId, zcRequestId: call.requestId, serviceSlug, usage: meters };
  t.match(await seller.usage.report(report), { ok: true, duplicate: false }, 'hub took it, but say the answer was lost');

  const faults = injectFaults(t, hubUrl);
  faults.scope.post('/v1/usage').times(3).reply(503, 'down');
  t.same(await seller.usage.report(report), { ok: true, queued: true });
  // The retries meet the remaining two faults, then the real hub.
  await until(() => faults.scope.isDone(), 'the faults used up');
  faults.end();
  await until(() => seller.usage.outages().reportsDelivered === 1, 'delivered by a retry');
  t.match(seller.events.at(-1), { type: 'report_delivered', result: { ok: true, duplicate: true } });
  t.equal((await world.events(call.requestId)).length, 1, 'recorded once');
});

t.test('failOpen: a full queue, and close() with reports still kept, drop them and say so', async (t) => {
  const seller = await sellerWith('failOpen', { retryDelayMs: 60_000, maxQueuedReports: 1 });
  const faults = injectFaults(t, hubUrl);
  faults.scope.post('/v1/usage').times(2).reply(503, 'down');
  const report = (key: string) => ({ idempotencyKey: key, zcRequestId: newRequestId(false), serviceSlug, usage: meters });
  t.same(await seller.usage.report(report('first')), { ok: true, queued: true });
  await t.rejects(seller.usage.report(report('second')), { name: 'AllowanceUnavailableError' }, 'not kept: the caller is told');
  faults.end();
  t.same(seller.types(), ['report_queued', 'report_dropped']);
  // hub is stopped for good before close() makes its last try.
  const stopped = injectFaults(t, hubUrl);
  stopped.scope.post('/v1/usage').replyWithError({ code: 'ECONNREFUSED', message: 'connect ECONNREFUSED' });
  await seller.usage.close({ timeoutMs: 1_000 });
  stopped.end();
  t.same(seller.types(), ['report_queued', 'report_dropped', 'report_dropped']);
  t.match(seller.events.at(-1), { request: { idempotencyKey: 'first' } });
  t.match(seller.usage.outages(), { reportsQueued: 1, reportsDropped: 2, reportsWaiting: 0 });
});

t.test('hub slow: past the timeout, failClosed answers 503 and failOpen serves', async (t) => {
  // A short timeout for calls that only ever meet the held fault (the real hub's first answers may take longer).
  const closed = await sellerWith('failClosed', { timeoutMs: 300 });
  const open = await sellerWith('failOpen', { timeoutMs: 300 });
  const faults = injectFaults(t, hubUrl);
  slowHub(faults.scope, '/v1/usage/check');
  slowHub(faults.scope, '/v1/usage/check');
  const refused = await send(closed.port, { path: '/metered', requestId: newRequestId(false) });
  const served = await send(open.port, { path: '/metered', requestId: newRequestId(false) });
  faults.end();
  t.same([refused.status, refused.json], [503, { error: 'allowance_unavailable' }]);
  t.match(closed.events, [{ type: 'check_refused', error: { status: 0, message: /timeout/ } }]);
  t.match([served.status, served.json], [200, { served: true, allowanceOutage: true }]);
  t.same(open.types(), ['check_let_through']);
});

t.test('a key hub refuses is a setup error under either policy, never an outage', async (t) => {
  const pageViewsOnly = await createApiKey(world.db, { organizationId: world.organizationId, name: 'pages', scopes: ['page-views:write'] });
  for (const policy of ['failClosed', 'failOpen'] as const) {
    const seller = await sellerWith(policy, { apiKey: pageViewsOnly.key });
    const r = await send(seller.port, { path: '/metered', ...(await allowedCall()) });
    t.same([r.status, r.json], [500, { error: 'Internal server error' }], `${policy}: not served, and not called an outage`);
    t.same(seller.events, []);
    await t.rejects(seller.usage.check({ zcRequestId: newRequestId(false), serviceSlug, usage: meters }), {
      name: 'UsageApiError',
      status: 403,
      body: { error: 'insufficient_scope' },
    });
  }
});

t.test('hub stopped: failClosed answers 503, failOpen serves and keeps the report', async (t) => {
  const closed = await sellerWith('failClosed');
  const open = await sellerWith('failOpen', { retryDelayMs: 60_000 });
  await closeServer(world.cp.server, 0);

  const refused = await send(closed.port, { path: '/metered', requestId: newRequestId(false) });
  t.same([refused.status, refused.json], [503, { error: 'allowance_unavailable' }]);
  t.match(closed.events, [{ type: 'check_refused', error: { status: 0 } }]);

  const served = await send(open.port, { method: 'POST', path: '/metered/report', requestId: newRequestId(false) });
  t.equal(served.status, 200);
  t.match(served.json, { allowanceOutage: true, report: { ok: true, queued: true } });
  await open.usage.close({ timeoutMs: 500 });
  t.same(open.types(), ['check_let_through', 'report_queued', 'report_dropped']);
});
