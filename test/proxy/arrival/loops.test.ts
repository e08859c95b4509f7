import type { AddressInfo } from 'node:net';
import pino from 'pino';
import t from 'tap';
import { type Dispatcher, request } from 'undici';
import { createProxy } from '../../../proxy/create.js';
import { listen } from '../../../runtime/http-server.js';
import { testProviders } from '../../helpers/database.js';
import { payRequest, startTestHub } from '../../helpers/hub.js';
import { serveOnLoopback } from '../../helpers/loopback-server.js';
import { sellerBehind, startTestUpstream } from '../../helpers/upstream.js';

// A seller's upstream that leads back to hub (its own pay URL, a relay to it, hub's control-plane)
// and addresses the policy forbids, met at the proxy: the loop ends at the first hop back, and a
// connection goes only where the policy allows when it is made.

for (const provider of testProviders()) {
  t.test(`loops and upstream addresses on ${provider}`, async (t) => {
    const hub = await startTestHub(t, provider);
    const upstream = await startTestUpstream(t);
    await sellerBehind(hub, upstream, 'acme');
    const mark = hub.proxy.services.pools.loopMark;

    t.test("every forwarded request carries the installation's mark in CDN-Loop, after what arrived", async (t) => {
      t.match(mark, /^hub-[0-9a-f]{16}$/);
      t.equal((await hub.pay('acme', '/echo')).status, 200);
      t.equal(upstream.seen.at(-1)!.headers['cdn-loop'], mark);
      // A CDN in front, or another hub installation this request passed through, is no loop.
      const chained = await hub.pay('acme', '/echo', { headers: { 'cdn-loop': 'cloudflare, hub-0123456789abcdef' } });
      t.equal(chained.status, 200);
      t.equal(upstream.seen.at(-1)!.headers['cdn-loop'], `cloudflare, hub-0123456789abcdef, ${mark}`);
    });

    t.test('a request carrying its own mark is refused 508 at once and nothing is forwarded', async (t) => {
      const before = upstream.seen.length;
      const agent = await hub.agent();
      for (const field of [mark, `cloudflare, ${mark}`, `${mark}; hops=2`, `hub-0123456789abcdef,${mark}`]) {
        const res = await hub.pay('acme', '/echo', {
          method: 'POST',
          body: '{}',
          headers: { 'cdn-loop': field, authorization: `Bearer ${agent.token}`, 'x-payment': 'not-a-payment' },
        });
        t.equal(res.status, 508, field);
        t.same(await res.json(), { error: 'loop_detected' });
      }
      t.equal(upstream.seen.length, before, 'the seller got none of them');
    });

    t.test('an upstream that relays back to a pay URL: one hop, then 508 loop_detected', async (t) => {
      let hops = 0;
      const relay = await serveOnLoopback(t, async (req, res, body) => {
        // Bounded, so the test ends even if hub forwarded the loop around again.
        if (++hops > 3) return void res.writeHead(500).end('runaway');
        const { 'content-length': _length, connection: _connection, host: _host, ...headers } = req.headers;
        const back = await request(`${hub.proxyUrl}${req.url}`, {
          method: req.method as Dispatcher.HttpMethod,
          headers: { ...headers, host: 'acme.pay.localhost' } as Record<string, string | string[]>,
          body: body || null,
        });
        res.writeHead(back.statusCode, { 'content-type': String(back.headers['content-type']) }).end(await back.body.text());
      });
      await hub.seller({ slug: 'relayed', upstreamBaseUrl: relay });
      const before = upstream.seen.length;
      const res = await hub.pay('relayed', '/echo');
      t.equal(res.status, 508);
      t.same(await res.json(), { error: 'loop_detected' });
      t.equal(hops, 1, 'the relay was reached once');
      t.equal(upstream.seen.length, before, 'the seller behind the pay URL got nothing');
    });

    t.test('a connection is checked where it is made: a loopback upstream with HUB_PRIVATE_UPSTREAMS off', async (t) => {
      // The sellers were accepted while the setting was on; this proxy of the same installation runs with it off.
      const strict = createProxy(
        { ...hub.proxy.services.config, privateUpstreams: false },
        pino({ level: 'silent' }),
        hub.cp.internalToken,
      );
      const strictUrl = `http://127.0.0.1:${await listen(strict.server, 0, '127.0.0.1')}`;
      t.teardown(() => strict.stop());
      const port = new URL(upstream.url).port;
      await sellerBehind(hub, { ...upstream, url: `http://localhost:${port}` }, 'byname');

      t.equal((await hub.pay('byname', '/echo')).status, 200, 'allowed by default');
      const before = upstream.seen.length;
      const byName = await payRequest(strictUrl, '/echo', 'byname.pay.localhost');
      t.equal(byName.status, 502);
      t.match(await byName.json(), {
        error: 'upstream_unreachable',
        reason: /localhost resolves to 127\.0\.0\.1; 127\.0\.0\.1 is a loopback address/,
      });
      const byAddress = await payRequest(strictUrl, '/echo', 'acme.pay.localhost');
      t.equal(byAddress.status, 502);
      t.match(await byAddress.json(), { error: 'upstream_unreachable', reason: /127\.0\.0\.1 is a loopback address/ });
      t.equal(upstream.seen.length, before, 'no connection reached the seller');
    });

    t.test("a name that resolves to hub's control-plane is refused as a loop when the proxy connects", async (t) => {
      // A name can start resolving there after the seller was accepted (DNS rebinding).
      const cpPort = (hub.cp.server.address() as AddressInfo).port;
      await hub.seller({ slug: 'rebound', upstreamBaseUrl: `http://localhost:${cpPort}/v1` });
      const res = await hub.pay('rebound', '/sellers');
      t.equal(res.status, 508);
      t.match(await res.json(), {
        error: 'loop_detected',
        reason: /leads back to this hub: localhost resolves to 127\.0\.0\.1; 127\.0\.0\.1:\d+ is this hub's own listener/,
      });
    });
  });
}
