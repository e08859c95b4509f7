import t from 'tap';
import { viewerId } from '../../control-plane/page-views/viewer.js';
import { createSellerApp } from '../../examples/seller/app.js';
import { closeServer } from '../../runtime/http-server.js';
import { createPageViewReporter, type PageViewReporter, type PageViewReporterOptions } from '../../sdk/index.js';
import { normalizedIp, visitorAddress } from '../../sdk/page-views/visitor-address.js';
import { FRAMEWORKS, pageViewHub, startSite, visit } from '../helpers/page-view-sites.js';
import { until } from '../helpers/row-locks.js';
import { onLoopback, secrets, send } from '../helpers/signed-request.js';

// The SDK's page-view reporter (spec: Page view report request body, Page-view rules) in real
// node:http, Express and Fastify sites on loopback, reporting to a real control-plane; each view is
// read back from hub's database. hub keeps no user agent or IP, so the test recomputes the viewer
// id from the address and user agent it expects to have been forwarded.

const CHROME = 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0 Safari/537.36';
const CLAUDE_USER = 'Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; Claude-User/1.0; +Claude-User@anthropic.com)';

const unhandled: unknown[] = [];
process.on('unhandledRejection', (reason) => unhandled.push(reason));

const hub = await pageViewHub(t);

function reporterWith(options: Partial<PageViewReporterOptions> = {}): PageViewReporter {
  const reporter = createPageViewReporter({ baseUrl: hub.cp.url, apiKey: hub.apiKey, seller: hub.sellerId, ...options });
  t.teardown(() => reporter.close());
  return reporter;
}

/** Polls (5 s at most) until `count` views have been through the reporter, sent or not. */
function settled(reporter: PageViewReporter, count: number): Promise<void> {
  return until(() => {
    const s = reporter.stats();
    return s.pending === 0 && s.sending === 0 && s.sent + s.failed + s.dropped + s.invalid >= count;
  }, `${count} views through the reporter`);
}

const viewsUnder = async (prefix: string) => (await hub.views()).filter((v) => v.path.startsWith(prefix));

for (const framework of FRAMEWORKS) {
  t.test(`${framework}: each GET page is reported as its visitor saw it, and nothing else`, async (t) => {
    const reporter = reporterWith();
    const { port } = await startSite(t, framework, reporter);
    const p = `/${framework}`;
    const browser = {
      'user-agent': CHROME,
      accept: 'text/html,application/xhtml+xml',
      referer: 'https://ann:pw@News.Example.com:8443/story?token=s3cret#top',
    };
    const before = new Date();
    const page = await visit(port, `${p}/docs?utm_source=x&session=abc#install`, { headers: browser });
    t.same(
      [page.status, page.body],
      [200, '<!doctype html><title>Docs</title><h1>Docs</h1>'],
      'the site answers as it would without the reporter',
    );
    t.equal((await visit(port, `${p}/missing`, { headers: browser })).status, 404);
    await visit(port, `${p}/guide.md`, { headers: { 'user-agent': CLAUDE_USER, accept: 'text/markdown' } });
    // Not pages (a script, JSON, a redirect) and not GET (spec: only page-content GET requests).
    for (const path of ['app.js', 'api/data', 'old']) await visit(port, `${p}/${path}`, { headers: browser });
    await visit(port, `${p}/docs`, { method: 'HEAD', headers: browser });
    await visit(port, `${p}/docs`, { method: 'POST', headers: browser });
    // The last page: once its view is through, so is anything the requests before it would have sent.
    await visit(port, `${p}/docs`, { headers: browser });
    await settled(reporter, 4);
    const after = new Date();

    // Sent side by side, views may reach hub in any order: they are compared by path.
    const views = (await viewsUnder(p)).sort((a, b) => a.path.localeCompare(b.path));
    t.same(
      views.map((v) => [v.path, v.status]),
      [
        [`${p}/docs`, 200],
        [`${p}/docs`, 200],
        [`${p}/guide.md`, 200],
        [`${p}/missing`, 404],
      ],
      'the path without query or fragment, and the status served',
    );
    const [first, , markdown] = views;
    t.match(first, { viewerClass: 'human', acceptsMarkdown: false, referrerHost: 'news.example.com', country: null, journeyId: null });
    t.equal(first!.viewerId, viewerId(hub.cp.masterKey, '127.0.0.1', CHROME, first!.createdAt), "the visitor's own address and user agent");
    t.ok(first!.capturedAt! >= new Date(before.getTime() - 1) && first!.capturedAt! <= after, 'captured when served, on the site’s clock');
    t.ok(first!.durationMs !== null && first!.durationMs >= 0 && first!.durationMs < 5_000, 'the duration measured');
    t.match(markdown, { viewerClass: 'agent', acceptsMarkdown: true, referrerHost: null });
    t.equal(markdown!.viewerId, viewerId(hub.cp.masterKey, '127.0.0.1', CLAUDE_USER, markdown!.createdAt));
    t.same(reporter.stats(), { pending: 0, sending: 0, sent: 4, failed: 0, dropped: 0, invalid: 0 });
  });
}

t.test("the visitor's address: the socket's, unless the seller trusts its own proxies' X-Forwarded-For", async (t) => {
  // Two proxies in front: the first saw the visitor (203.0.113.9), the second the first (198.51.100.7).
  const chain = 'forged-by-the-client, 203.0.113.9, 198.51.100.7';
  const cases: [number, string, string | undefined][] = [
    [0, chain, '127.0.0.1'],
    [1, chain, '198.51.100.7'],
    [2, chain, '203.0.113.9'],
    [3, chain, undefined],
    [9, '203.0.113.9, 198.51.100.7', '203.0.113.9'],
    [1, 'unknown', undefined],
    [1, '', '127.0.0.1'],
  ];
  for (const [i, [trustedProxies, forwardedFor, expected]] of cases.entries()) {
    const reporter = reporterWith({ trustedProxies });
    const { port } = await startSite(t, 'node', reporter);
    const headers: Record<string, string> = { 'user-agent': CHROME };
    if (forwardedFor) headers['x-forwarded-for'] = forwardedFor;
    await visit(port, `/node/ip/${i}`, { headers });
    await settled(reporter, 1);
    const [view] = await viewsUnder(`/node/ip/${i}`);
    t.equal(
      view!.viewerId,
      viewerId(hub.cp.masterKey, expected, CHROME, view!.createdAt),
      `${trustedProxies} trusted, "${forwardedFor}": ${expected}`,
    );
  }
});

t.test('addresses in one spelling; anything else is no address', async (t) => {
  for (const [raw, expected] of [
    ['203.0.113.7', '203.0.113.7'],
    ['::ffff:203.0.113.7', '203.0.113.7'],
    ['203.0.113.7:51234', '203.0.113.7'],
    ['[2001:DB8::1]:443', '2001:db8::1'],
    ['2001:db8::1', '2001:db8::1'],
    [' 198.51.100.4 ', '198.51.100.4'],
    ['unknown', undefined],
    ['300.1.1.1', undefined],
    ['1.2.3.4.5', undefined],
    ['_hidden', undefined],
    ['', undefined],
  ] as const) {
    t.equal(normalizedIp(raw), expected, JSON.stringify(raw));
  }
  t.equal(visitorAddress('127.0.0.1', ['203.0.113.9', '198.51.100.7'], 2), '203.0.113.9', 'repeated headers read as one list');
  t.equal(visitorAddress(undefined, undefined, 0), undefined, 'a socket already gone');
});

t.test('hostile header values are left out, never cut, and never reach the visitor', async (t) => {
  const reporter = reporterWith({
    countryHeader: 'CF-IPCountry',
    journeyId: (req) => req.headers['x-journey'] as string | undefined,
  });
  const { port } = await startSite(t, 'node', reporter);
  const cases: [string, Record<string, string>, Record<string, unknown>][] = [
    ['long-agent', { 'user-agent': `${CHROME} ${'A'.repeat(3_000)}` }, { viewerClass: 'unknown' }],
    ['long-accept', { accept: `text/markdown,${'x/y,'.repeat(600)}` }, { acceptsMarkdown: false }],
    ['script-referrer', { referer: 'javascript:alert(document.cookie)' }, { referrerHost: null }],
    ['broken-referrer', { referer: 'http://[::1' }, { referrerHost: null }],
    ['host-referrer', { referer: 'search.example.org' }, { referrerHost: null }],
    ['country', { 'cf-ipcountry': 'de' }, { country: 'DE' }],
    ['junk-country', { 'cf-ipcountry': '<script>' }, { country: null }],
    [
      'latin1-agent',
      { 'user-agent': 'Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0 caf\u00e9' },
      { viewerClass: 'human' },
    ],
    ['journey', { 'x-journey': 'jrn_42' }, { journeyId: 'jrn_42' }],
    ['long-journey', { 'x-journey': 'j'.repeat(201) }, { journeyId: null }],
  ];
  // Each case its own (not found) page, so that its view is found by path.
  for (const [name, headers] of cases) {
    t.equal((await visit(port, `/node/case/${name}`, { headers })).status, 404, `${name}: the page is served`);
  }
  // hub refuses paths over 2,048 characters: that view is not sent at all, and the page still is.
  const long = await visit(port, `/node/${'p'.repeat(2_100)}`, { headers: { 'user-agent': CHROME } });
  t.equal(long.status, 404);
  await visit(port, '/node/case/last');
  await settled(reporter, cases.length + 2);
  t.match(reporter.stats(), { sent: cases.length + 1, failed: 0, invalid: 1 }, 'hub refused none of them');

  const views = await viewsUnder('/node/case/');
  const viewOf = (name: string) => views.find((v) => v.path === `/node/case/${name}`);
  for (const [name, , expected] of cases) t.match(viewOf(name), { status: 404, ...expected }, name);
  const longAgent = viewOf('long-agent')!;
  t.equal(
    longAgent.viewerId,
    viewerId(hub.cp.masterKey, '127.0.0.1', undefined, longAgent.createdAt),
    'a user agent hub would refuse is left out, not cut',
  );
});

t.test('the reference seller reports its docs page, and none of its API', async (t) => {
  const reporter = reporterWith();
  const app = createSellerApp({ secrets, hub: { baseUrl: hub.cp.url, apiKey: hub.apiKey }, serviceSlug: 'forecast', pageViews: reporter });
  const port = await onLoopback(app);
  t.teardown(() => closeServer(app, 100));
  t.equal((await send(port, { path: '/echo' })).status, 200, 'a signed API call (JSON)');
  t.equal((await visit(port, '/docs', { headers: { 'user-agent': CHROME } })).status, 200);
  await settled(reporter, 1);
  t.match(await viewsUnder('/docs'), [{ path: '/docs', status: 200, viewerClass: 'human' }]);
  t.equal(reporter.stats().sent, 1);
});

t.test('isPage chooses the pages; only GET is ever reported', async (t) => {
  const reporter = reporterWith({ isPage: ({ path, status }) => path.startsWith('/express/api/') && status === 200 });
  const { port } = await startSite(t, 'express', reporter);
  await visit(port, '/express/docs');
  await visit(port, '/express/docs', { method: 'POST' });
  await visit(port, '/express/api/data');
  await settled(reporter, 1);
  t.same(
    (await viewsUnder('/express/api')).map((v) => v.path),
    ['/express/api/data'],
  );
  t.equal(reporter.stats().sent, 1, 'the HTML page is not a page under this isPage');
});

t.test('a full queue drops new views and counts them', async (t) => {
  const reporter = reporterWith({ maxQueue: 2, concurrency: 1 });
  const accepted = Array.from({ length: 10 }, (_, i) => reporter.report({ path: `/queue/${i}` }));
  t.same(accepted, [true, true, true, false, false, false, false, false, false, false]);
  t.same(reporter.stats(), { pending: 2, sending: 1, sent: 0, failed: 0, dropped: 7, invalid: 0 }, 'one on its way, two waiting');
  await reporter.flush();
  t.same(reporter.stats(), { pending: 0, sending: 0, sent: 3, failed: 0, dropped: 7, invalid: 0 });
  t.same(
    (await viewsUnder('/queue/')).map((v) => v.path),
    ['/queue/0', '/queue/1', '/queue/2'],
  );
});

t.test('after close(), views are dropped and sites go on serving', async (t) => {
  const reporter = reporterWith();
  const { port } = await startSite(t, 'fastify', reporter);
  t.equal(reporter.report({ path: '/closing/sent' }), true);
  const final = await reporter.close();
  t.same(final, { pending: 0, sending: 0, sent: 1, failed: 0, dropped: 0, invalid: 0 }, 'close() sends what waits');
  t.equal(reporter.report({ path: '/closing/late' }), false);
  t.equal((await visit(port, '/fastify/docs')).status, 200);
  await until(() => reporter.stats().dropped === 2, 'the late views counted');
  t.same(
    (await viewsUnder('/closing/')).map((v) => v.path),
    ['/closing/sent'],
  );
  t.same(await reporter.close(), reporter.stats(), 'closing twice is harmless');
});

t.test('set up wrong is refused at once, not view after view', async (t) => {
  const base = { baseUrl: hub.cp.url, apiKey: hub.apiKey, seller: hub.sellerId };
  t.throws(() => createPageViewReporter({ ...base, seller: 'acme' }), /seller must be a seller id/);
  t.throws(() => createPageViewReporter({ ...base, baseUrl: 'hub.example.com' }), /baseUrl must be an absolute URL/);
  t.throws(() => createPageViewReporter({ ...base, apiKey: '' }), /apiKey is required/);
  for (const bad of [{ trustedProxies: -1 }, { maxQueue: 0 }, { concurrency: 1.5 }, { timeoutMs: Number.NaN }]) {
    t.throws(() => createPageViewReporter({ ...base, ...bad }), RangeError, JSON.stringify(bad));
  }
});

t.test('no promise was left rejected', async (t) => {
  t.same(unhandled, []);
});
