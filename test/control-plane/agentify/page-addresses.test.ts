import t from 'tap';
import type { ResolvedAddress } from '../../../runtime/upstream-addresses.js';
import { startTestControlPlane } from '../../helpers/control-plane.js';
import { testProviders } from '../../helpers/database.js';
import { serveOnLoopback } from '../../helpers/loopback-server.js';
import { managementClient } from '../../helpers/management.js';

// Agentify fetches a seller's upstream host under the same address policy as the proxy: never a
// link-local address or hub's own ports, loopback and private ones only while
// HUB_PRIVATE_UPSTREAMS is on. The names resolve only through this test's resolver, so the
// sellers are accepted when created (a name that does not resolve yet is checked at connect).

for (const provider of testProviders()) {
  t.test(`agentify's page addresses on ${provider}`, async (t) => {
    const site = await serveOnLoopback(t, (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html' }).end('<html><head><title>Docs</title></head><body><p>The docs.</p></body></html>');
    });
    const names: Record<string, ResolvedAddress[]> = {
      'site.seller-c.test': [{ address: '127.0.0.1', family: 4 }],
      'meta.seller-c.test': [{ address: '169.254.169.254', family: 4 }],
      'self.seller-c.test': [{ address: '127.0.0.1', family: 4 }],
    };
    const resolve = async (hostname: string) => {
      const found = names[hostname];
      if (!found) throw Object.assign(new Error('not found'), { code: 'ENOTFOUND' });
      return found;
    };
    const port = new URL(site).port;
    const upstreams = [`http://site.seller-c.test:${port}`, 'http://meta.seller-c.test', 'http://self.seller-c.test:8400'];

    const start = async (env: Record<string, string>) => {
      const cp = await startTestControlPlane(t, provider, env, undefined, { resolve });
      const api = managementClient(cp.url);
      const { apiKey, organizationId } = await cp.bootstrap();
      for (const [i, upstreamBaseUrl] of upstreams.entries()) {
        const slug = `c${i}-${organizationId.slice(-6).toLowerCase()}`;
        t.equal((await api.post('/v1/sellers', apiKey, { name: 'C', slug, upstreamBaseUrl })).status, 201, upstreamBaseUrl);
      }
      return (url: string) => api.get(`/v1/agentify/markdown?url=${encodeURIComponent(url)}`, apiKey);
    };

    t.test('never link-local or hub itself, whatever the upstream host', async (t) => {
      const markdown = await start({});
      t.match((await markdown('http://meta.seller-c.test/latest/meta-data')).body, {
        error: 'page_host_not_owned',
        reason: /169\.254\.169\.254 is link-local/,
      });
      t.match((await markdown('http://self.seller-c.test:8400/v1/sellers')).body, {
        error: 'page_host_not_owned',
        reason: /127\.0\.0\.1:8400 is this hub's own listener/,
      });
      t.equal((await markdown(`http://site.seller-c.test:${port}/docs`)).status, 200, 'a loopback upstream is fine by default');
    });

    t.test('with HUB_PRIVATE_UPSTREAMS=off, not a loopback upstream either', async (t) => {
      const markdown = await start({ HUB_PRIVATE_UPSTREAMS: 'off' });
      const res = await markdown(`http://site.seller-c.test:${port}/docs`);
      t.equal(res.status, 422);
      t.match(res.body, { error: 'page_host_not_owned', reason: /127\.0\.0\.1 is a loopback address/ });
    });
  });
}
