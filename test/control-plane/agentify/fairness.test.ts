import t from 'tap';
import { startTestControlPlane } from '../../helpers/control-plane.js';
import { serveOnLoopback } from '../../helpers/loopback-server.js';
import { managementClient } from '../../helpers/management.js';

// Agentify over real HTTP with two organizations, each with its own site on loopback: one sends
// pages that take far longer to convert than the limit, the other a small page. The small page is
// answered in about the time it takes alone, not after the heavy ones; the heavy organization's
// own small page, queued behind them for longer than the limit, still converts. Which page waits
// for which is decided in memory, never in the database, so this runs on SQLite only: each run
// keeps both conversion threads busy for seconds.

/** Minutes of work for linkedom and Readability (their cost grows faster than the page). */
const HEAVY = `<html><body>${'<div><p>words words words <a href="/x">link</a></p>'.repeat(3_000)}</body></html>`;
const SMALL = '<html><head><title>Small</title></head><body><p>A short page.</p></body></html>';
const LIMIT_MS = 3_000;

{
  const provider = 'sqlite';
  t.test(`one organization's heavy pages beside another's small one, on ${provider}`, async (t) => {
    const sent: string[] = [];
    let onSent = () => {};
    const site = () =>
      serveOnLoopback(t, (req, res) => {
        res.on('finish', () => {
          sent.push(req.url ?? '');
          onSent();
        });
        res.writeHead(200, { 'content-type': 'text/html' }).end(req.url === '/heavy' ? HEAVY : SMALL);
      });
    const [siteA, siteB] = [await site(), await site()];
    const cp = await startTestControlPlane(t, provider, {}, undefined, { conversion: { timeoutMs: LIMIT_MS } });
    const api = managementClient(cp.url);
    const [a, b] = [await cp.bootstrap(), await cp.bootstrap()];
    for (const [org, slug, upstream] of [
      [a, `docs-a-${provider}`, siteA],
      [b, `docs-b-${provider}`, siteB],
    ] as const) {
      const created = await api.post('/v1/sellers', org.apiKey, { name: 'Docs', slug, upstreamBaseUrl: upstream });
      t.equal(created.status, 201, JSON.stringify(created.body));
    }
    const timed = async (url: string, token: string) => {
      const start = performance.now();
      const res = await api.get(`/v1/agentify/markdown?url=${encodeURIComponent(url)}`, token);
      return { ...res, ms: performance.now() - start, at: performance.now() };
    };
    const sentCount = (n: number) =>
      new Promise<void>((resolve) => {
        onSent = () => sent.length >= n && resolve();
        onSent();
      });

    t.equal((await timed(`${siteB}/small`, b.apiKey)).status, 200, 'the first page starts the threads');
    const alone = await timed(`${siteB}/small`, b.apiKey);
    t.equal(alone.status, 200, 'the small page alone');

    const heavy = [timed(`${siteA}/heavy`, a.apiKey), timed(`${siteA}/heavy`, a.apiKey)];
    await sentCount(4);
    const queued = timed(`${siteA}/small`, a.apiKey);
    await sentCount(5);
    const small = await timed(`${siteB}/small`, b.apiKey);
    const [first, second] = await Promise.all(heavy);
    t.comment(`small page alone ${Math.round(alone.ms)} ms, beside the heavy ones ${Math.round(small.ms)} ms`);

    t.equal(small.status, 200, JSON.stringify(small.body));
    t.match(small.body.page, { title: 'Small', markdown: /A short page/ });
    t.ok(small.ms < LIMIT_MS, 'answered well within the time one heavy page holds a thread');
    t.ok(small.at < first!.at, 'answered before the first heavy page is cut off');
    for (const cut of [first!, second!]) {
      t.equal(cut.status, 422);
      t.match(cut.body, { error: 'page_too_large', reason: /longer than 3 s to convert/ });
    }
    const own = await queued;
    t.equal(own.status, 200, `the heavy organization's small page converts after waiting its turn: ${JSON.stringify(own.body)}`);
    t.ok(own.ms > LIMIT_MS, 'it waited longer than the limit, which counts from when the conversion starts');
  });
}
