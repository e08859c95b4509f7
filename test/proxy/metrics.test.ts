import t from 'tap';
import { request } from 'undici';
import { startProxy } from '../../proxy/main.js';
import { testProviders } from '../helpers/database.js';
import { startTestHub } from '../helpers/hub.js';
import { freePort } from '../helpers/processes.js';
import { rawExchange } from '../helpers/raw-http.js';
import { sellerBehind, startTestUpstream } from '../helpers/upstream.js';

/** A GET of `path` on `port` with exactly this Host header. */
async function get(port: number, path: string, host: string) {
  const res = await request(`http://127.0.0.1:${port}${path}`, { headers: { host } });
  return { status: res.statusCode, headers: res.headers, text: await res.body.text() };
}

for (const provider of testProviders()) {
  t.test(`${provider}: the proxy's metrics are never on the pay URL, only on their own port`, async (t) => {
    const hub = await startTestHub(t, provider);
    const upstream = await startTestUpstream(t);
    await sellerBehind(hub, upstream);
    const metricsPort = await freePort();
    const proxy = await startProxy({
      HUB_ENV: 'test',
      HUB_LOG_LEVEL: 'silent',
      HUB_PROXY_PORT: String(await freePort()),
      HUB_PROXY_METRICS_PORT: String(metricsPort),
      HUB_CONTROL_PLANE_URL: hub.cp.url,
      HUB_INTERNAL_TOKEN: hub.cp.internalToken,
    });
    t.teardown(() => proxy.stop());

    await t.test('/metrics on the pay port is an unknown pay-URL path, whatever the Host', async (t) => {
      for (const host of ['127.0.0.1', `127.0.0.1:${proxy.port}`, '[::1]', '[::1]:8402', '10.1.2.3', 'localhost', 'nobody.pay.localhost']) {
        const res = await get(proxy.port, '/metrics', host);
        t.equal(res.status, 404, `Host ${host}`);
        t.same(JSON.parse(res.text), { error: 'seller_not_found' }, `Host ${host}: as any path there`);
      }
      const hostless = await rawExchange(proxy.port, 'GET /metrics HTTP/1.0\r\n\r\n');
      t.equal(hostless.status, 404, 'no Host at all');
      t.same(JSON.parse(hostless.body), { error: 'seller_not_found' });
      t.equal((await get(proxy.port, '/healthz', '127.0.0.1')).status, 200, 'the probes still answer there');
    });

    await t.test("on a seller's pay host it is the seller's own path, forwarded", async (t) => {
      const before = upstream.seen.length;
      const res = await get(proxy.port, '/metrics', 'acme.pay.localhost');
      t.notMatch(res.text, /hub_proxy_/, 'no metrics of hub in the answer');
      t.same(
        upstream.seen.slice(before).map((r) => r.url),
        ['/metrics'],
        'the seller got it',
      );
    });

    await t.test('the metrics port serves GET /metrics, counting the pay URL’s requests', async (t) => {
      const echoed = await get(proxy.port, '/echo', 'acme.pay.localhost');
      t.equal(echoed.status, 200);
      const res = await get(metricsPort, '/metrics', `127.0.0.1:${metricsPort}`);
      t.equal(res.status, 200);
      t.match(res.headers['content-type'], /^text\/plain; version=0\.0\.4/);
      t.match(res.text, /^hub_proxy_requests_total\{status="2xx"\} [1-9]\d*$/m);
      t.match(res.text, /^hub_proxy_requests_total\{status="4xx"\} [1-9]\d*$/m, 'the refused /metrics requests above');
      t.match(res.text, /^hub_proxy_requests_in_progress 0$/m, 'a scrape is not a pay-URL request');
      const again = await get(metricsPort, '/metrics', 'acme.pay.localhost');
      t.equal(again.status, 200, 'whatever the Host: the port is the operator’s');
    });

    await t.test('the metrics port serves nothing else', async (t) => {
      for (const path of ['/', '/healthz', '/echo', '/metrics/']) {
        const res = await get(metricsPort, path, 'acme.pay.localhost');
        t.equal(res.status, 404, path);
        t.same(JSON.parse(res.text), { error: 'not_found' }, path);
      }
      const post = await request(`http://127.0.0.1:${metricsPort}/metrics`, { method: 'POST', body: '' });
      t.equal(post.statusCode, 405);
      t.same(await post.body.json(), { error: 'method_not_allowed', reason: 'Use GET /metrics.' });
    });
  });
}

t.test('without HUB_PROXY_METRICS_PORT the proxy listens on the pay port only', async (t) => {
  const hub = await startTestHub(t, 'sqlite');
  const proxy = await startProxy({
    HUB_ENV: 'test',
    HUB_LOG_LEVEL: 'silent',
    HUB_PROXY_PORT: String(await freePort()),
    HUB_CONTROL_PLANE_URL: hub.cp.url,
    HUB_INTERNAL_TOKEN: hub.cp.internalToken,
  });
  t.teardown(() => proxy.stop());
  t.equal(proxy.metricsPort, undefined);
  t.equal((await get(proxy.port, '/metrics', '127.0.0.1')).status, 404);
});
