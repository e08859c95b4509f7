import { gzipSync } from 'node:zlib';
import t from 'tap';
import type { ResolvedAddress } from '../../../control-plane/agentify/page-fetch.js';
import { createApiKey, createSession } from '../../../control-plane/auth/credentials.js';
import { startTestControlPlane } from '../../helpers/control-plane.js';
import { testProviders } from '../../helpers/database.js';
import { serveOnLoopback } from '../../helpers/loopback-server.js';
import { managementClient } from '../../helpers/management.js';

// GET /v1/agentify/markdown over real HTTP against a real local HTML site: the seller's own pages
// become markdown; every refusal (foreign hosts, redirects off the seller's hosts, internal
// addresses behind a custom hostname, huge and compressed-huge pages, non-HTML, errors), the
// credential rules and the budget of 60 a minute.

const ARTICLE = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Getting started · Widgets API</title></head>
<body>
  <nav><a href="/">Home</a> <a href="/pricing">Pricing</a> <a href="/blog">Blog</a></nav>
  <main><article>
    <h1>Getting started</h1>
    <p>Call <code>GET /v1/widgets</code> to list the widgets you own. Authenticate first as the
       <a href="auth">authentication guide</a> explains; every call is billed per request.</p>
    <p>Each widget call costs <strong>one cent</strong>. Calls that fail are never billed, and the
       usage you report is settled at the end of the request, so an agent pays only for what it used.</p>
    <table><thead><tr><th>Plan</th><th>Price</th></tr></thead>
      <tbody><tr><td>Per call</td><td>$0.01</td></tr><tr><td>Monthly</td><td>$20.00</td></tr></tbody></table>
    <pre><code>curl https://api.widgets.example/v1/widgets</code></pre>
    <p><img src="/img/diagram.png" alt="Request flow"> <a href="javascript:alert(1)">click</a></p>
  </article></main>
  <footer>© 2026 Widgets Inc. <a href="/legal">Legal</a></footer>
  <script>window.secret = 'script text never reaches the markdown'</script>
</body></html>`;

const MIB = 1024 * 1024;

for (const provider of testProviders()) {
  t.test(`agentify on ${provider}`, async (t) => {
    const foreignHits: string[] = [];
    const foreign = await serveOnLoopback(t, (req, res) => {
      foreignHits.push(req.url ?? '');
      res.writeHead(200, { 'content-type': 'text/html' }).end('<html><body><p>someone else’s page</p></body></html>');
    });
    let site = '';
    const site127 = await serveOnLoopback(t, (req, res) => {
      const path = (req.url ?? '/').split('?')[0];
      const html = (body: string | Buffer, headers: Record<string, string> = {}) =>
        res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', ...headers }).end(body);
      if (path === '/docs/start') return html(ARTICLE);
      if (path === '/moved') return res.writeHead(301, { location: '/docs/start#top' }).end();
      if (path === '/away') return res.writeHead(302, { location: `${foreign}/page` }).end();
      if (path === '/to-file') return res.writeHead(302, { location: 'file:///etc/passwd' }).end();
      if (path === '/loop') return res.writeHead(302, { location: '/loop' }).end();
      if (path === '/gzipped') return html(gzipSync(ARTICLE), { 'content-encoding': 'gzip' });
      if (path === '/bomb') return html(gzipSync(Buffer.alloc(40 * MIB, 0x20)), { 'content-encoding': 'gzip' });
      if (path === '/declared-huge') return html('<html></html>', { 'content-length': String(6 * MIB) });
      if (path === '/latin1') {
        return res
          .writeHead(200, { 'content-type': 'text/html; charset=iso-8859-1' })
          .end(Buffer.from('<html><head><title>Caf\xe9</title></head><body><p>Cr\xe8me br\xfbl\xe9e</p></body></html>', 'latin1'));
      }
      if (path === '/json') return res.writeHead(200, { 'content-type': 'application/json' }).end('{"a":1}');
      if (path === '/untyped') return res.writeHead(200).end('<!doctype html><html><body><p>No type, still HTML</p></body></html>');
      if (path === '/untyped-binary') return res.writeHead(200).end(Buffer.from([0, 1, 2, 3]));
      if (path === '/missing') return res.writeHead(404, { 'content-type': 'text/html' }).end('<p>not here</p>');
      if (path === '/huge') {
        // 6 MiB of HTML streamed without a declared length: the cap must cut it while it arrives.
        res.writeHead(200, { 'content-type': 'text/html' });
        const chunk = `<p>${'x'.repeat(64 * 1024 - 7)}</p>`;
        let sent = 0;
        const pump = () => {
          while (sent < 6 * MIB) {
            sent += chunk.length;
            if (!res.write(chunk)) return res.once('drain', pump);
          }
          res.end();
        };
        return pump();
      }
      res.writeHead(404).end();
    });
    const port = new URL(site127).port;
    // The seller's upstream is a name only this test's resolver knows: reaching the site through it
    // shows the connection goes to the address checked, not to a second lookup.
    site = `http://site.seller-a.test:${port}`;
    const lookups: string[] = [];
    const names: Record<string, ResolvedAddress[]> = {
      'site.seller-a.test': [{ address: '127.0.0.1', family: 4 }],
      'docs.seller-a.test': [{ address: '127.0.0.1', family: 4 }],
      'metadata.seller-a.test': [
        { address: '93.184.215.14', family: 4 },
        { address: '169.254.169.254', family: 4 },
      ],
    };
    const cp = await startTestControlPlane(t, provider, {}, undefined, {
      resolve: async (hostname) => {
        lookups.push(hostname);
        const found = names[hostname];
        if (!found) throw Object.assign(new Error('not found'), { code: 'ENOTFOUND' });
        return found;
      },
    });
    const api = managementClient(cp.url);
    const a = await cp.bootstrap();
    const b = await cp.bootstrap();
    const sellerA = (
      await api.post('/v1/sellers', a.apiKey, {
        name: 'Widgets',
        slug: `widgets-${a.organizationId.slice(-6).toLowerCase()}`,
        upstreamBaseUrl: `${site}/api`,
        hostnames: ['docs.seller-a.test', 'metadata.seller-a.test', 'gone.seller-a.test'],
      })
    ).body.seller;
    t.ok(sellerA?.id, 'seller created through the API');
    await api.post('/v1/sellers', b.apiKey, {
      name: 'Someone else',
      slug: `else-${b.organizationId.slice(-6).toLowerCase()}`,
      upstreamBaseUrl: foreign,
    });
    const markdown = (url: string, token = a.apiKey) => api.get(`/v1/agentify/markdown?url=${encodeURIComponent(url)}`, token);

    await t.test('a page of the seller’s site as markdown, main content only, links absolute', async (t) => {
      const res = await markdown(`${site}/docs/start?lang=en#install`);
      t.equal(res.status, 200, JSON.stringify(res.body));
      const page = res.body.page;
      t.match(page, {
        url: `${site}/docs/start?lang=en`,
        seller: sellerA.id,
        title: 'Getting started · Widgets API',
        lang: 'en',
        fetchedAt: /^\d{4}-\d\d-\d\dT/,
      });
      t.match(page.excerpt, /GET \/v1\/widgets/);
      const md: string = page.markdown;
      t.match(md, /^# Getting started · Widgets API\n\n/, 'the title as the heading');
      t.match(md, /`GET \/v1\/widgets`/, 'inline code');
      t.match(md, `[authentication guide](${site}/docs/auth)`, 'a relative link made absolute');
      t.match(md, `![Request flow](${site}/img/diagram.png)`, 'an image made absolute');
      t.match(md, /\*\*one cent\*\*/);
      t.match(md, /\| Plan \| Price \|\n\| --- \| --- \|\n\| Per call \| \$0\.01 \|/, 'a GitHub-flavoured table');
      t.match(md, /```\ncurl https:\/\/api\.widgets\.example\/v1\/widgets\n```/, 'a fenced code block');
      t.notMatch(md, /window\.secret|script text/, 'no script');
      t.notMatch(md, /javascript:/, 'no script link');
      t.notMatch(md, /Blog|Widgets Inc/, 'navigation and footer left out');
    });

    await t.test('redirects on the seller’s hosts are followed; gzip and charsets are read', async (t) => {
      const moved = await markdown(`${site}/moved`);
      t.equal(moved.status, 200);
      t.equal(moved.body.page.url, `${site}/docs/start`, 'the URL read, after the redirect, without fragment');
      const gzipped = await markdown(`${site}/gzipped`);
      t.equal(gzipped.status, 200);
      t.match(gzipped.body.page.markdown, /one cent/);
      const latin1 = await markdown(`${site}/latin1`);
      t.equal(latin1.status, 200);
      t.equal(latin1.body.page.title, 'Café');
      t.match(latin1.body.page.markdown, /Crème brûlée/);
      const untyped = await markdown(`${site}/untyped`);
      t.equal(untyped.status, 200, 'HTML without a content type is recognised');
      t.match(untyped.body.page.markdown, /No type, still HTML/);
    });

    await t.test('hosts the organization does not own are refused before any request', async (t) => {
      const cases = [
        foreign, // another organization's seller
        `${foreign}/page`,
        `${cp.url}/v1/sellers`, // hub itself
        `http://site.seller-a.test:${Number(port) + 1}/`, // the upstream host on another port
        'http://docs.seller-a.test:8080/', // a custom hostname on a port the public does not use
        'https://example.com/',
        'http://169.254.169.254/latest/meta-data/',
        'http://[::1]:8400/',
      ];
      for (const url of cases) {
        const res = await markdown(url);
        t.equal(res.status, 422, url);
        t.equal(res.body.error, 'page_host_not_owned', url);
      }
      t.same(foreignHits, [], 'nothing was fetched from a foreign host');
    });

    await t.test('a redirect off the seller’s hosts is not followed', async (t) => {
      const away = await markdown(`${site}/away`);
      t.equal(away.status, 422);
      t.match(away.body, { error: 'page_host_not_owned', reason: /redirects to 127\.0\.0\.1:\d+/ });
      t.same(foreignHits, [], 'the foreign host never saw a request');
      const file = await markdown(`${site}/to-file`);
      t.match(file.body, { error: 'page_host_not_owned', reason: /file:/ });
      const loop = await markdown(`${site}/loop`);
      t.equal(loop.status, 502);
      t.match(loop.body, { error: 'page_unreachable', reason: /more than 5 times/ });
    });

    await t.test('a custom hostname never reaches an internal address', async (t) => {
      for (const url of ['http://docs.seller-a.test/', 'https://metadata.seller-a.test/latest/meta-data/']) {
        const res = await markdown(url);
        t.equal(res.status, 422, url);
        t.match(res.body, { error: 'page_host_not_owned', reason: /internal address/ }, url);
      }
      const gone = await markdown('https://gone.seller-a.test/');
      t.equal(gone.status, 502);
      t.match(gone.body, { error: 'page_unreachable', reason: /does not resolve \(ENOTFOUND\)/ });
      t.ok(lookups.includes('site.seller-a.test'), 'names are resolved by hub, once per hop');
    });

    await t.test('huge pages are cut off: streamed, declared, or compressed', async (t) => {
      for (const path of ['/huge', '/declared-huge', '/bomb']) {
        const res = await markdown(`${site}${path}`);
        t.equal(res.status, 422, path);
        t.match(res.body, { error: 'page_too_large', limitBytes: 5 * MIB }, path);
      }
    });

    await t.test('pages that are not HTML, or not there', async (t) => {
      const json = await markdown(`${site}/json`);
      t.equal(json.status, 422);
      t.match(json.body, { error: 'page_not_html', contentType: 'application/json' });
      const binary = await markdown(`${site}/untyped-binary`);
      t.match(binary.body, { error: 'page_not_html' });
      const missing = await markdown(`${site}/missing`);
      t.equal(missing.status, 502);
      t.match(missing.body, { error: 'page_unreachable', pageStatus: 404 });
    });

    await t.test('bad parameters are 400 with a readable message', async (t) => {
      for (const query of [
        '',
        '?url=',
        '?url=not%20a%20url',
        '?url=ftp%3A%2F%2Fexample.com%2F',
        `?url=${encodeURIComponent('http://u:p@example.com/')}`,
      ]) {
        const res = await api.get(`/v1/agentify/markdown${query}`, a.apiKey);
        t.equal(res.status, 400, query);
        t.match(res.body.error, /url/, query);
      }
      const long = await markdown(`${site}/${'a'.repeat(2100)}`);
      t.equal(long.status, 400);
    });

    await t.test('API keys with agentify:convert only', async (t) => {
      t.equal((await api.get(`/v1/agentify/markdown?url=${site}/docs/start`)).status, 401);
      const session = (await createSession(cp.db, a.userId, a.organizationId)).token;
      t.match((await markdown(`${site}/docs/start`, session)).body, { error: 'auth_type_not_allowed' });
      const readOnly = (await createApiKey(cp.db, { organizationId: a.organizationId, name: 'read', scopes: ['admin:read'] })).key;
      const refused = await markdown(`${site}/docs/start`, readOnly);
      t.equal(refused.status, 403);
      t.equal(refused.body.error, 'insufficient_scope');
    });

    await t.test('60 a minute per organization, then 429 with Retry-After', async (t) => {
      const c = await cp.bootstrap();
      // A fixed one-minute window: if it turns during the loop, the count starts again, so up to
      // two windows' worth may pass before the refusal.
      let allowed = 0;
      let refusal: Awaited<ReturnType<typeof markdown>> | undefined;
      for (let i = 0; i < 125 && !refusal; i++) {
        const res = await markdown('https://example.com/', c.apiKey);
        if (res.status === 429) refusal = res;
        else allowed++;
      }
      t.ok(refusal, 'refused within two windows');
      t.ok(allowed >= 60 && allowed <= 120, `${allowed} allowed before the refusal`);
      t.match(refusal?.body, { error: 'rate_limited', retryAfterSeconds: Number });
      t.ok(Number(refusal?.headers.get('retry-after')) >= 1, 'Retry-After header');
      t.equal((await markdown(`${site}/docs/start`)).status, 200, 'another organization is not limited');
    });
  });
}
