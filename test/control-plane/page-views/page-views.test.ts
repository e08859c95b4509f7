import t from 'tap';
import { startTestControlPlane } from '../../helpers/control-plane.js';
import { testProviders } from '../../helpers/database.js';
import { managementClient, managementWorld } from '../../helpers/management.js';

// POST /v1/page-views (spec: Page-view report request body and rules) over HTTP: every field rule,
// 204 before the write, the viewer id and class, refusals, the per-organization budget, and no raw
// user agent or IP anywhere in the database afterwards.

const CHROME = 'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0 Safari/537.36';
const GPTBOT = 'Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; GPTBot/1.2; +https://openai.com/gptbot)';
const CHATGPT_USER = 'Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko); compatible; ChatGPT-User/1.0; +https://openai.com/bot';
const IP = '203.0.113.77';

for (const provider of testProviders()) {
  t.test(`page views on ${provider}`, async (t) => {
    const world = await managementWorld(t, provider);
    const { cp, api, a, b } = world;
    const key = world.credentials.usageKey;
    const report = (body: unknown) => api.post('/v1/page-views', key, body);
    const stored = async () => {
      await cp.pageViews.sink.drain();
      return cp.db.pageView.findMany({ orderBy: { createdAt: 'asc' } });
    };

    await t.test('204 at once; the spec’s field rules as stored', async (t) => {
      const res = await report({
        seller: a.sellerId,
        path: '/docs/start?utm_source=x#install',
        status: 200,
        durationMs: 12.6,
        capturedAt: '2026-11-25T10:00:00.000Z',
        journeyId: 'jrn_123',
        userAgent: CHROME,
        accept: 'text/html,application/xhtml+xml',
        clientIp: IP,
        country: 'de',
        referrerHost: 'https://News.Example.com:8443/story?id=1',
      });
      t.equal(res.status, 204);
      t.equal(res.body, undefined, 'an empty answer');
      const [view] = await stored();
      t.match(view, {
        sellerId: a.sellerId,
        path: '/docs/start',
        status: 200,
        durationMs: 13,
        capturedAt: new Date('2026-11-25T10:00:00.000Z'),
        journeyId: 'jrn_123',
        viewerClass: 'human',
        acceptsMarkdown: false,
        country: 'DE',
        referrerHost: 'news.example.com',
        viewerId: /^[A-Za-z0-9_-]{22}$/,
      });
    });

    await t.test('optional fields stay unset; capturedAt is never invented', async (t) => {
      t.equal((await report({ seller: a.sellerId, path: '/bare' })).status, 204);
      const view = (await stored()).find((v) => v.path === '/bare');
      t.match(view, {
        status: null,
        durationMs: null,
        capturedAt: null,
        journeyId: null,
        country: null,
        referrerHost: null,
        viewerClass: 'unknown',
      });
    });

    await t.test('viewer classes, markdown, countries and referrers', async (t) => {
      const cases: [Record<string, unknown>, Record<string, unknown>][] = [
        [{ userAgent: GPTBOT }, { viewerClass: 'crawler' }],
        [
          { userAgent: CHATGPT_USER, accept: 'text/markdown, text/html;q=0.5' },
          { viewerClass: 'agent', acceptsMarkdown: true },
        ],
        [
          { userAgent: 'curl/8.5.0', accept: 'text/markdown;q=0' },
          { viewerClass: 'crawler', acceptsMarkdown: false },
        ],
        [{ country: 'XX' }, { country: null }],
        [{ country: 'T1' }, { country: null }],
        [{ country: 'USA' }, { country: null }],
        [{ referrerHost: 'search.example.org' }, { referrerHost: 'search.example.org' }],
        [{ referrerHost: 'not a host at all' }, { referrerHost: null }],
      ];
      for (const [i, [fields, expected]] of cases.entries()) {
        t.equal((await report({ seller: a.sellerId, path: `/case/${i}`, ...fields })).status, 204);
        t.match(
          (await stored()).find((v) => v.path === `/case/${i}`),
          expected,
          JSON.stringify(fields),
        );
      }
    });

    await t.test('one viewer id per visitor and day; another IP is another viewer', async (t) => {
      for (const [path, clientIp] of [
        ['/v/1', IP],
        ['/v/2', IP],
        ['/v/3', '198.51.100.4'],
      ] as const) {
        await report({ seller: a.sellerId, path, userAgent: CHROME, clientIp });
      }
      const views = await stored();
      const id = (path: string) => views.find((v) => v.path === path)!.viewerId;
      t.equal(id('/v/1'), id('/v/2'));
      t.not(id('/v/1'), id('/v/3'));
    });

    await t.test('refusals: another organization’s seller, bad fields, wrong types', async (t) => {
      t.match(await report({ seller: b.sellerId, path: '/' }), { status: 404, body: { error: 'seller_not_found' } });
      t.match(await report({ seller: 'sel_000000000000000000000000', path: '/' }), { status: 404, body: { error: 'seller_not_found' } });
      for (const [body, field] of [
        [{ seller: a.sellerId, path: 'docs' }, /^path: /],
        [{ seller: a.sellerId, path: '/', status: 99 }, /^status: /],
        [{ seller: a.sellerId, path: '/', status: 600 }, /^status: /],
        [{ seller: a.sellerId, path: '/', status: '200' }, /^status: /],
        [{ seller: a.sellerId, path: '/', durationMs: -1 }, /^durationMs: /],
        [{ seller: a.sellerId, path: '/', capturedAt: 'yesterday' }, /^capturedAt: /],
        // Dates PostgreSQL's driver writes in a form PostgreSQL then refuses, holding up the batch.
        [{ seller: a.sellerId, path: '/', capturedAt: '0000-06-01T00:00:00Z' }, /^capturedAt: must fall in the years 1970 to 9999/],
        [{ seller: a.sellerId, path: '/', capturedAt: '0000-01-01T00:00:00+23:59' }, /^capturedAt: /],
        [{ seller: a.sellerId, path: '/', capturedAt: '1969-12-31T23:59:59Z' }, /^capturedAt: /],
        [{ seller: a.sellerId, path: '/', method: 'GET' }, /Unrecognized key/],
        [{ seller: 'nope', path: '/' }, /^seller: /],
        [{ path: '/' }, /^seller: /],
      ] as const) {
        t.match(await report(body), { status: 400, body: { error: field } }, JSON.stringify(body));
      }
      // Two such paths would both be stored as "/\ufffd", and the batch's rollup would meet itself.
      // The body reader refuses them, as any body it cannot pass on: invalid_request.
      for (const path of ['/\ud800', '/\udc00x']) {
        t.match(
          await report({ seller: a.sellerId, path }),
          { status: 400, body: { error: 'invalid_request', reason: /well-formed Unicode/ } },
          JSON.stringify(path),
        );
      }
    });

    await t.test('no raw user agent or IP is stored anywhere', async (t) => {
      await stored();
      const tables = await Promise.all([cp.db.pageView.findMany(), cp.db.requestRecord.findMany(), cp.db.usageEvent.findMany()]);
      const dump = JSON.stringify(tables, (_k, v) => (typeof v === 'bigint' ? v.toString() : v));
      for (const secret of [IP, '198.51.100.4', 'Chrome/131.0', 'GPTBot', 'ChatGPT-User', 'curl/8.5.0'])
        t.notOk(dump.includes(secret), secret);
    });
  });

  t.test(`page views past the organization's budget on ${provider}`, async (t) => {
    const cp = await startTestControlPlane(t, provider, { HUB_PAGE_VIEWS_PER_MINUTE: '3' });
    const boot = await cp.bootstrap();
    const api = managementClient(cp.url);
    const { seller } = (await api.post('/v1/sellers', boot.apiKey, { name: 'A', slug: 'a-views', upstreamBaseUrl: 'http://127.0.0.1:9' }))
      .body;
    const statuses = [];
    for (let i = 0; i < 4; i++) statuses.push((await api.post('/v1/page-views', boot.apiKey, { seller: seller.id, path: '/' })).status);
    t.same(statuses, [204, 204, 204, 429]);
    t.match((await api.post('/v1/page-views', boot.apiKey, { seller: seller.id, path: '/' })).body, {
      error: 'rate_limited',
      retryAfterSeconds: Number,
    });
  });
}
