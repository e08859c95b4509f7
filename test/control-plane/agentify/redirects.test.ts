import t from 'tap';
import { ownedHostsOf, ownerOf } from '../../../control-plane/agentify/owned-hosts.js';
import type { ResolvedAddress } from '../../../control-plane/agentify/page-fetch.js';
import { startTestControlPlane } from '../../helpers/control-plane.js';
import { testProviders } from '../../helpers/database.js';
import { serveOnLoopback } from '../../helpers/loopback-server.js';
import { managementClient } from '../../helpers/management.js';

// Redirects as docs/decisions.md › Agentify has them, over real HTTP on both databases: followed
// on the host asked for, to an origin the organization's sellers own there; refused to https on an
// upstream's http port (hub would speak TLS to a plain server) and to any other host, even one of
// the organization's own.

for (const provider of testProviders()) {
  t.test(`agentify redirects on ${provider}`, async (t) => {
    const otherHits: string[] = [];
    const other = await serveOnLoopback(t, (req, res) => {
      otherHits.push(req.url ?? '');
      res.writeHead(200, { 'content-type': 'text/html' }).end('<html><body><p>The other site</p></body></html>');
    });
    const otherPort = new URL(other).port;
    let sitePort = '';
    const site = await serveOnLoopback(t, (req, res) => {
      const redirect = (location: string) => res.writeHead(302, { location }).end();
      if (req.url === '/to-https') return redirect(`https://site.a.test:${sitePort}/docs`);
      if (req.url === '/to-owned-host') return redirect(`http://other.a.test:${otherPort}/page`);
      if (req.url === '/to-owned-address') return redirect(`${other}/page`);
      if (req.url === '/to-custom') return redirect('http://docs.a.test/');
      if (req.url === '/moved') return redirect('/docs');
      res.writeHead(200, { 'content-type': 'text/html' }).end('<html><head><title>Docs</title></head><body><p>The docs</p></body></html>');
    });
    sitePort = new URL(site).port;
    const names: Record<string, ResolvedAddress[]> = {
      'site.a.test': [{ address: '127.0.0.1', family: 4 }],
      'other.a.test': [{ address: '127.0.0.1', family: 4 }],
    };
    const cp = await startTestControlPlane(t, provider, {}, undefined, {
      resolve: async (hostname) => names[hostname] ?? Promise.reject(Object.assign(new Error('not found'), { code: 'ENOTFOUND' })),
    });
    const api = managementClient(cp.url);
    const a = await cp.bootstrap();
    // Every host the pages redirect to is the organization's: two more upstreams and a custom hostname.
    for (const [slug, upstreamBaseUrl, hostnames] of [
      ['docs', `http://site.a.test:${sitePort}/api`, ['docs.a.test']],
      ['other', `http://other.a.test:${otherPort}`, []],
      ['other-by-address', other, []],
    ] as const) {
      const created = await api.post('/v1/sellers', a.apiKey, { name: slug, slug: `${slug}-${provider}`, upstreamBaseUrl, hostnames });
      t.equal(created.status, 201, JSON.stringify(created.body));
    }
    const markdown = (url: string) => api.get(`/v1/agentify/markdown?url=${encodeURIComponent(url)}`, a.apiKey);

    await t.test('on the host asked for, a redirect is followed', async (t) => {
      const moved = await markdown(`http://site.a.test:${sitePort}/moved`);
      t.equal(moved.status, 200);
      t.equal(moved.body.page.url, `http://site.a.test:${sitePort}/docs`);
    });

    await t.test('to https on an upstream’s http port: 422, not a TLS failure', async (t) => {
      const res = await markdown(`http://site.a.test:${sitePort}/to-https`);
      t.equal(res.status, 422);
      t.match(res.body, {
        error: 'page_host_not_owned',
        reason: new RegExp(`redirects to https://site\\.a\\.test:${sitePort}, which this organization’s sellers do not own`),
      });
      const asked = await markdown(`https://site.a.test:${sitePort}/docs`);
      t.equal(asked.status, 422, 'asked for directly, the same');
      t.match(asked.body, { error: 'page_host_not_owned', reason: /own site\.a\.test:\d+ over http, not https/ });
    });

    await t.test('to another host of the organization: refused, nothing fetched there', async (t) => {
      for (const path of ['/to-owned-host', '/to-owned-address', '/to-custom']) {
        const res = await markdown(`http://site.a.test:${sitePort}${path}`);
        t.equal(res.status, 422, path);
        t.match(
          res.body,
          { error: 'page_host_not_owned', reason: /redirects are followed on the host asked for only \(ask for http/ },
          path,
        );
      }
      t.same(otherHits, [], 'the other site never saw a request');
      t.equal((await markdown(`http://other.a.test:${otherPort}/page`)).status, 200, 'asked for itself, the page is converted');
    });

    await t.test('a custom hostname is owned over http at 80 and https at 443, so http to https is followed', async (t) => {
      const hosts = await ownedHostsOf(cp.db, a.organizationId);
      const start = new URL('http://docs.a.test/guide');
      t.ok(ownerOf(hosts, start), 'http at 80');
      t.ok(ownerOf(hosts, new URL('https://docs.a.test/guide'), start), 'a redirect to https at 443');
      t.throws(() => ownerOf(hosts, new URL('https://docs.a.test:8443/guide'), start), { code: 'page_host_not_owned' });
      t.throws(() => ownerOf(hosts, new URL('http://docs.a.test:443/'), start), { code: 'page_host_not_owned' });
    });
  });
}
