import { request as httpRequest } from 'node:http';
import { createServer } from 'node:net';
import { Readable } from 'node:stream';
import t from 'tap';
import { request as undiciRequest } from 'undici';
import { upstreamFailure } from '../../proxy/paid-call/upstream.js';
import { startTestHub } from '../helpers/hub.js';
import { freePort } from '../helpers/processes.js';
import { sellerBehind, startTestUpstream } from '../helpers/upstream.js';

t.test('limits, timeouts and a dead upstream give clear errors', async (t) => {
  const hub = await startTestHub(t, 'sqlite', {
    HUB_MAX_BODY_BYTES: '1024',
    HUB_UPSTREAM_HEADERS_TIMEOUT_MS: '300',
    HUB_UPSTREAM_BODY_TIMEOUT_MS: '300',
  });
  const upstream = await startTestUpstream(t);
  await sellerBehind(hub, upstream);

  await t.test('a body over the limit is 413 and never reaches the seller', async (t) => {
    const before = upstream.seen.length;
    const declared = await hub.pay('acme', '/echo', { method: 'POST', body: 'x'.repeat(2_000) });
    t.equal(declared.status, 413);
    t.match(await declared.json(), { error: 'payload_too_large' });
    const res = await undiciRequest(`${hub.proxyUrl}/echo`, {
      method: 'POST',
      headers: { host: 'acme.pay.localhost' },
      body: Readable.from(
        (function* () {
          for (let i = 0; i < 4; i++) yield Buffer.alloc(600, 1);
        })(),
      ),
    });
    t.equal(res.statusCode, 413, 'a chunked body without a declared length is cut off too');
    await res.body.dump();
    t.equal(upstream.seen.length, before);
    const fits = await hub.pay('acme', '/echo', { method: 'POST', body: 'y'.repeat(1_024) });
    t.equal(fits.status, 200, 'exactly the limit is accepted');
  });

  await t.test('no response headers in time is 504 upstream_timeout', async (t) => {
    const res = await hub.pay('acme', '/slow-headers');
    t.equal(res.status, 504);
    t.match(await res.json(), { error: 'upstream_timeout' });
  });

  await t.test('a body that stalls is cut off after the idle timeout', async (t) => {
    const res = await undiciRequest(`${hub.proxyUrl}/stall-body`, { headers: { host: 'acme.pay.localhost' } });
    t.equal(res.statusCode, 200, 'headers were already sent');
    const outcome = await res.body.text().then(
      () => 'complete',
      () => 'aborted',
    );
    t.equal(outcome, 'aborted', 'the agent sees the response end early, not a hang');
  });

  await t.test('an upstream that is down is 502 upstream_unreachable', async (t) => {
    const dead = await freePort();
    const s = await hub.seller({ slug: 'down', upstreamBaseUrl: `http://127.0.0.1:${dead}` });
    t.ok(s.kid);
    const res = await hub.pay('down', '/anything');
    t.equal(res.status, 502);
    t.same(await res.json(), { error: 'upstream_unreachable' });
  });

  await t.test('an upstream that drops the connection is 502 upstream_error', async (t) => {
    const rude = createServer((socket) => socket.destroy());
    await new Promise<void>((r) => rude.listen(0, '127.0.0.1', r));
    t.teardown(() => new Promise((r) => rude.close(r)));
    await hub.seller({ slug: 'rude', upstreamBaseUrl: `http://127.0.0.1:${(rude.address() as { port: number }).port}` });
    const res = await hub.pay('rude', '/anything');
    t.equal(res.status, 502);
    t.match(await res.json(), { error: 'upstream_error' });
  });

  await t.test('a 402 hub cannot turn into a challenge is the seller’s failure: 502, never a 500', async (t) => {
    const cut = await hub.pay('acme', '/pay/cut');
    t.match([cut.status, await cut.json()], [502, { error: 'upstream_error' }], 'cut off mid-body');
    const crowded = await hub.pay('acme', '/pay/crowded');
    t.match(
      [crowded.status, await crowded.json()],
      [502, { error: 'upstream_error', reason: /payment_required body hub can price/ }],
      'asking for more items than a challenge holds (the agent is not to blame)',
    );
  });

  await t.test('each undici failure maps to its status', async (t) => {
    t.equal(upstreamFailure({ code: 'UND_ERR_CONNECT_TIMEOUT' }).error.status, 504);
    t.equal(upstreamFailure({ code: 'UND_ERR_HEADERS_TIMEOUT' }).error.status, 504);
    t.equal(upstreamFailure({ code: 'ECONNREFUSED' }).error.code, 'upstream_unreachable');
    t.equal(upstreamFailure({ code: 'UND_ERR_SOCKET' }).error.code, 'upstream_error');
    t.equal(upstreamFailure(new Error('???')).error.code, 'upstream_error');
  });

  await t.test('metrics count requests, latency and upstream errors', async (t) => {
    // Served on a port of their own (test/proxy/metrics.test.ts); here, what they count.
    const text = await hub.proxy.services.metrics.render();
    t.match(text, /hub_proxy_requests_total\{status="2xx"\} \d+/);
    t.match(text, /hub_proxy_requests_total\{status="5xx"\} \d+/);
    t.match(text, /hub_proxy_request_duration_seconds_bucket\{le="\+Inf"\} \d+/);
    t.match(text, /hub_proxy_upstream_errors_total\{kind="headers_timeout"\} 1/);
    t.match(text, /hub_proxy_upstream_errors_total\{kind="connect"\} 1/);
    t.match(text, /^hub_proxy_requests_in_progress 0$/m, 'nothing left over');
  });

  await t.test('the proxy holds no per-request state once requests are done', async (t) => {
    const agent = await hub.agent();
    await hub.proxy.services.recorder.drain();
    const anonymousCalls = async () =>
      (await hub.cp.db.requestTally.aggregate({ _sum: { count: true }, where: { lifecycle: 'delivered' } }))._sum.count ?? 0;
    const anonymousBefore = await anonymousCalls();
    await Promise.all(
      Array.from({ length: 200 }, (_, i) =>
        hub.pay('acme', `/echo?i=${i}`, i % 2 ? { headers: { authorization: `Bearer ${agent.token}` } } : {}).then((r) => r.arrayBuffer()),
      ),
    );
    await hub.proxy.services.recorder.drain();
    const { catalog, agents, recorder, pools } = hub.proxy.services;
    t.equal(recorder.pending(), 0, 'no queued records');
    t.equal(catalog.size().pending, 0, 'no lookups in flight');
    t.ok(catalog.size().hosts <= 4, `catalog holds hosts, not requests (${catalog.size().hosts})`);
    t.ok(agents.size() <= 2, `agent cache holds agents, not requests (${agents.size()})`);
    t.ok(pools.size() <= 4, 'one pool per upstream origin');
    t.equal(
      await hub.cp.db.requestRecord.count({ where: { path: { startsWith: '/echo?i=' } } }),
      100,
      'every identified request has its record',
    );
    t.equal((await anonymousCalls()) - anonymousBefore, 100, 'every anonymous call was counted');
  });
});

t.test('an agent that goes away before the seller answers takes the upstream request with it', async (t) => {
  const hub = await startTestHub(t, 'sqlite');
  let upstreamClosed!: () => void;
  const closed = new Promise<void>((resolve) => (upstreamClosed = resolve));
  let arrived!: () => void;
  const reached = new Promise<void>((resolve) => (arrived = resolve));
  const upstream = await startTestUpstream(t, async (req) => {
    if (!req.url?.startsWith('/hold')) return;
    req.socket.once('close', upstreamClosed);
    arrived();
    await closed;
  });
  await sellerBehind(hub, upstream, 'held');

  const agent = httpRequest(`${hub.proxyUrl}/hold`, { headers: { host: 'held.pay.localhost' } });
  agent.on('error', () => {});
  agent.end();
  await reached;
  agent.destroy();
  // The headers timeout is 30 s here: only the agent's leaving can close the upstream socket.
  const outcome = await Promise.race([closed.then(() => 'closed'), new Promise((r) => setTimeout(() => r('still open'), 5_000))]);
  t.equal(outcome, 'closed', 'the upstream request was abandoned');
});
