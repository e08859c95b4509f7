import t from 'tap';
import { writePageViews } from '../../../control-plane/analytics/page-view-rollup.js';
import { countAttempt, countCalls, countTransaction } from '../../../control-plane/analytics/traffic-rollup.js';
import { sqlOf } from '../../../control-plane/db/sql.js';
import type { PageViewRow } from '../../../control-plane/page-views/sink.js';
import { newId } from '../../../shared/ids.js';
import { testProviders } from '../../helpers/database.js';
import { managementWorld } from '../../helpers/management.js';

// Page-view analytics (GET /v1/analytics/sellers/{sellerId}/page-views) and the windows of the
// seller analytics. First through the product: views reported with POST /v1/page-views. Then
// views and payments dated over 400 days, written by the same rollup writers the product uses
// (only the dates are chosen), and every answer compared with a count made from the raw rows, in
// zones whose midnight falls on the hour, the half hour and the quarter hour, across clock changes.

const CHROME = 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0 Safari/537.36';
const GPTBOT = 'Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; GPTBot/1.2; +https://openai.com/gptbot)';
const CLAUDE_USER = 'Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; Claude-User/1.0; +Claude-User@anthropic.com)';
const ZONES = ['UTC', 'Asia/Kolkata', 'Asia/Kathmandu', 'America/New_York', 'Pacific/Chatham', 'Australia/Lord_Howe'];
const CLASSES = ['human', 'agent', 'crawler', 'unknown'] as const;
const DAY = 86_400_000;

type Json = Record<string, any>;

for (const provider of testProviders()) {
  t.test(`page-view analytics on ${provider}`, async (t) => {
    const world = await managementWorld(t, provider);
    const { cp, api, a } = world;
    const read = world.credentials.readKey;

    const sellerId = world.b.sellerId; // a seller with no traffic yet
    const now = Date.now();
    const rows: PageViewRow[] = [];
    let seed = 7;
    const random = () => {
      seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648;
      return seed / 2_147_483_648;
    };
    for (let i = 0; i < 4_000; i++) {
      // Skewed toward recent days and toward the first paths, so ranks differ by window.
      const age = Math.floor(random() ** 2 * 400 * DAY);
      rows.push({
        id: newId('pageView'),
        organizationId: world.b.organizationId,
        sellerId,
        path: `/p${String(Math.floor(random() ** 3 * 40)).padStart(2, '0')}`,
        status: 200,
        durationMs: null,
        capturedAt: null,
        journeyId: null,
        viewerId: 'v',
        viewerClass: CLASSES[Math.floor(random() * 4)]!,
        acceptsMarkdown: random() < 0.2,
        country: random() < 0.1 ? null : ['DE', 'FR', 'US', 'JP', 'IN'][Math.floor(random() ** 2 * 5)]!,
        referrerHost: random() < 0.5 ? null : `r${Math.floor(random() * 12)}.example`,
        createdAt: new Date(now - age),
      });
    }
    // Written before any request: SQLite writes block this process, which also serves the API,
    // and a keep-alive connection left idle meanwhile could be closed as it is reused.
    for (let i = 0; i < rows.length; i += 1_000) await writePageViews(cp.db, rows.slice(i, i + 1_000));

    await t.test('views reported through the API, counted by class, path, country and referrer', async (t) => {
      const views: Json[] = [
        { path: '/pricing?x=1', userAgent: CHROME, country: 'de', referrerHost: 'https://news.example.com/a' },
        { path: '/pricing', userAgent: CHROME, country: 'DE' },
        { path: '/docs', userAgent: GPTBOT, country: 'US', referrerHost: 'news.example.com' },
        { path: '/docs', userAgent: CLAUDE_USER, accept: 'text/markdown', country: 'XX' },
        { path: '/pricing', country: 'FR' },
      ];
      for (const view of views)
        t.equal((await api.post('/v1/page-views', world.credentials.usageKey, { seller: a.sellerId, ...view })).status, 204);
      await cp.pageViews.sink.drain();
      const res = await api.get(`/v1/analytics/sellers/${a.sellerId}/page-views?days=1`, read);
      t.equal(res.status, 200);
      t.match(res.body.pageViews, {
        days: 1,
        timeZone: 'UTC',
        views: 5,
        byClass: { human: 2, agent: 1, crawler: 1, unknown: 1 },
        acceptsMarkdown: 1,
        perDay: [{ date: new Date().toISOString().slice(0, 10), views: 5, human: 2, agent: 1, crawler: 1, unknown: 1 }],
      });
      t.same(res.body.pageViews.topPaths, [
        { value: '/pricing', views: 3 },
        { value: '/docs', views: 2 },
      ]);
      t.same(res.body.pageViews.countries, [
        { value: 'DE', views: 2 },
        { value: 'FR', views: 1 },
        { value: 'US', views: 1 },
      ]);
      t.same(res.body.pageViews.referrers, [{ value: 'news.example.com', views: 2 }]);
      const week = await api.get(
        `/v1/analytics/sellers/${a.sellerId}/page-views?days=7&timeZone=Asia/Tokyo`,
        world.credentials.adminSession,
      );
      t.equal(week.body.pageViews.perDay.length, 7);
      t.equal(week.body.pageViews.views, 5);
    });

    await t.test('a year of dated views and payments: every window equals the count from raw rows', async (t) => {
      const bKey = world.b.apiKey;

      for (const timeZone of ZONES) {
        for (const days of [1, 2, 30, 365]) {
          const res = await api.get(`/v1/analytics/sellers/${sellerId}/page-views?days=${days}&timeZone=${timeZone}`, bKey);
          t.equal(res.status, 200);
          t.same(res.body.pageViews, expected(rows, days, timeZone, new Date()), `${days} days in ${timeZone}`);
          t.ok(res.body.pageViews.topPaths.length > 0 || days < 30, 'the fixture has views to rank');
        }
      }

      // The seller figures, counted by the writers the product uses, over the same dates.
      const events = rows
        .slice(0, 600)
        .map((r, i) => ({ at: r.createdAt, paid: i % 3 === 0, wallet: `0x${String(i % 50).padStart(40, '0')}` }));
      const sql = sqlOf(cp.db);
      await countCalls(
        sql,
        events.map((e) => ({ sellerId, at: e.at, count: 2 })),
      );
      for (const e of events) {
        await sql.run(countAttempt(sellerId, e.at));
        if (e.paid) await countTransaction(sql, { sellerId, createdAt: e.at, chargedMicros: 10_000n, payer: e.wallet });
      }
      for (const timeZone of ['Asia/Kathmandu', 'America/New_York']) {
        for (const days of [1, 30, 365]) {
          const start = windowStart(days, timeZone, new Date());
          const inside = events.filter((e) => +e.at >= start);
          const paid = inside.filter((e) => e.paid);
          // A wallet is new in the quarter-hour of the first of its payments to settle (here, to be counted).
          const firstPaid = new Map<string, number>();
          for (const e of events) if (e.paid && !firstPaid.has(e.wallet)) firstPaid.set(e.wallet, +e.at);
          const res = await api.get(`/v1/analytics/sellers/${sellerId}?days=${days}&timeZone=${timeZone}`, bKey);
          t.match(
            res.body.analytics,
            {
              calls: inside.length * 2,
              attempts: inside.length,
              transactions: paid.length,
              revenueUsd: (paid.length / 100).toFixed(6),
              newWallets: [...firstPaid.values()].filter((at) => at >= start).length,
            },
            `seller figures, ${days} days in ${timeZone}`,
          );
        }
      }
    });

    await t.test('views of a seller deleted since they were accepted are dropped, not their batch', async (t) => {
      const gone = { ...rows[0]!, id: newId('pageView'), sellerId: newId('seller') };
      const kept = { ...rows[0]!, id: newId('pageView'), createdAt: new Date() };
      t.equal(await writePageViews(cp.db, [gone, kept]), 1, 'the live seller’s view is stored');
      t.ok(await cp.db.pageView.findUnique({ where: { id: kept.id } }));
      const where = { where: { sellerId: gone.sellerId } };
      t.same(
        [await cp.db.pageView.count(where), await cp.db.pageViewStat.count(where), await cp.db.pageViewTally.count(where)],
        [0, 0, 0],
        'nothing of the other, nor a count of it',
      );
    });
  });
}

/** The answer computed from raw rows: the reference the rollups must match. */
function expected(rows: PageViewRow[], days: number, timeZone: string, now: Date) {
  const first = shiftDate(localDate(now, timeZone), 1 - days);
  const list = Array.from({ length: days }, (_, i) => shiftDate(first, i));
  // Each row's local date once: the test serves the API from this process, and a blocked
  // event loop would outlast the keep-alive of the connection the next request reuses.
  const dated = rows.map((r) => ({ r, date: localDate(r.createdAt, timeZone) }));
  const kept = dated.filter((d) => d.date >= first && +d.r.createdAt <= +now);
  const inside = kept.map((d) => d.r);
  const byDate = new Map<string, PageViewRow[]>();
  for (const d of kept) byDate.set(d.date, [...(byDate.get(d.date) ?? []), d.r]);
  const perDay = list.map((date) => {
    const day = byDate.get(date) ?? [];
    return { date, views: day.length, ...Object.fromEntries(CLASSES.map((c) => [c, day.filter((r) => r.viewerClass === c).length])) };
  });
  const top = (pick: (r: PageViewRow) => string | null) => {
    const counts = new Map<string, number>();
    for (const r of inside) {
      const value = pick(r);
      if (value !== null) counts.set(value, (counts.get(value) ?? 0) + 1);
    }
    return [...counts]
      .sort((x, y) => y[1] - x[1] || (x[0] < y[0] ? -1 : 1))
      .slice(0, 20)
      .map(([value, views]) => ({ value, views }));
  };
  return {
    days,
    timeZone,
    views: inside.length,
    byClass: Object.fromEntries(CLASSES.map((c) => [c, inside.filter((r) => r.viewerClass === c).length])),
    acceptsMarkdown: inside.filter((r) => r.acceptsMarkdown).length,
    perDay,
    topPaths: top((r) => r.path),
    countries: top((r) => r.country),
    referrers: top((r) => r.referrerHost),
  };
}

/** The first instant of the window, found from raw dates: the earliest minute whose local date is the first day's. */
function windowStart(days: number, timeZone: string, now: Date): number {
  const first = shiftDate(localDate(now, timeZone), 1 - days);
  let at = Math.floor(+now / 900_000) * 900_000;
  while (localDate(new Date(at - 900_000), timeZone) >= first) at -= 900_000;
  return at;
}

const formats = new Map<string, Intl.DateTimeFormat>();
function localDate(at: Date, timeZone: string): string {
  let format = formats.get(timeZone);
  if (!format) {
    format = new Intl.DateTimeFormat('en-CA', { timeZone, year: 'numeric', month: '2-digit', day: '2-digit' });
    formats.set(timeZone, format);
  }
  return format.format(at);
}

function shiftDate(date: string, days: number): string {
  const d = new Date(`${date}T00:00:00Z`);
  d.setUTCDate(d.getUTCDate() + days);
  return d.toISOString().slice(0, 10);
}
