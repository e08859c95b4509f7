import t from 'tap';
import { testProviders } from '../../helpers/database.js';
import { startTestHub } from '../../helpers/hub.js';
import { rawExchange } from '../../helpers/raw-http.js';
import { startTestUpstream } from '../../helpers/upstream.js';

// Request targets and Host headers no HTTP client would send, over a raw socket: each is a 400
// envelope and nothing reaches the seller, whose API sits under a base path it did not put
// anything else behind.
t.test('hostile request targets at the pay URL', async (t) => {
  const hub = await startTestHub(t, testProviders()[0]!);
  const upstream = await startTestUpstream(t);
  const seller = await hub.seller({ slug: 'based', upstreamBaseUrl: `${upstream.url}/api/v1` });
  upstream.secrets.set(seller.kid, seller.secret);
  const port = Number(new URL(hub.proxyUrl).port);
  const host = 'based.pay.localhost';
  const send = (requestLine: string, headers = `Host: ${host}\r\n`) =>
    rawExchange(port, `${requestLine} HTTP/1.1\r\n${headers}Connection: close\r\n\r\n`);

  await t.test('dot-segments that would leave the base path are refused, raw or encoded', async (t) => {
    const escapes = [
      '/../../admin',
      '/..',
      '/%2e%2e/admin',
      '/%2E%2E/%2e%2e/admin',
      '/..%2fadmin',
      '/a/..%2f..%2fadmin',
      '/.%2e/admin',
      '/\\..\\admin',
      '/a%5c..%5c..%5cadmin',
      '/..;/admin',
      '/a/../../admin',
      '//../admin',
      '/./../admin?x=1',
    ];
    for (const target of escapes) {
      const before = upstream.seen.length;
      const answer = await send(`GET ${target}`);
      t.equal(answer.status, 400, `${target} is a 400`);
      t.same(JSON.parse(answer.body), { error: 'invalid_request', reason: 'The request path climbs above the root with dot-segments' });
      t.equal(upstream.seen.length, before, `${target} reached nothing`);
    }
  });

  await t.test('dot-segments that stay below the base path are forwarded as sent, signature and all', async (t) => {
    for (const target of ['/./a/../b', '/a/b/../../c', '/echo/a%2Fb/../c', '/x?path=../../admin', '/file.v2.json', '/a/..b/c..']) {
      const answer = await send(`GET ${target}`);
      t.equal(answer.status, 404, `${target} reached the seller's API (its 404)`);
      t.equal(upstream.seen.at(-1)?.url, `/api/v1${target}`, `${target} forwarded unnormalized under the base path`);
    }
  });

  await t.test('request targets that are not a path are refused', async (t) => {
    const before = upstream.seen.length;
    for (const [line, reason] of [
      ['GET http://other.example/x', 'The request target must be a path (origin-form), such as /v1/items?q=1'],
      [`GET http://${host}/x`, 'The request target must be a path (origin-form), such as /v1/items?q=1'],
      ['GET *', 'The request target must be a path (origin-form), such as /v1/items?q=1'],
      ['OPTIONS *', 'The request target must be a path (origin-form), such as /v1/items?q=1'],
      ['GET /x#fragment', 'The request target must not carry a fragment'],
    ] as const) {
      const answer = await send(line);
      t.equal(answer.status, 400, line);
      t.same(JSON.parse(answer.body), { error: 'invalid_request', reason }, line);
    }
    t.equal(upstream.seen.length, before, 'none reached the seller');
  });

  await t.test('a duplicate or malformed Host header is refused', async (t) => {
    const before = upstream.seen.length;
    const cases = [
      [`Host: ${host}\r\nHost: other.pay.localhost\r\n`, 'The request carries more than one Host header'],
      [`Host: ${host}\r\nhost: ${host}\r\n`, 'The request carries more than one Host header'],
      [`Host: ${host}:abc\r\n`, 'The Host header is not a host name with an optional port'],
      [`Host: ${host}:\r\n`, 'The Host header is not a host name with an optional port'],
      [`Host: ${host} x\r\n`, 'The Host header is not a host name with an optional port'],
      [`Host: user@${host}\r\n`, 'The Host header is not a host name with an optional port'],
      [`Host: ${host}/admin\r\n`, 'The Host header is not a host name with an optional port'],
    ] as const;
    for (const [headers, reason] of cases) {
      const answer = await send('GET /echo', headers);
      t.equal(answer.status, 400, JSON.stringify(headers));
      t.same(JSON.parse(answer.body), { error: 'invalid_request', reason });
    }
    t.equal(upstream.seen.length, before, 'none reached the seller');

    const withPort = await send('GET /echo', `Host: ${host}:8402\r\n`);
    t.equal(withPort.status, 404, 'a host with a decimal port is served');
    t.equal(upstream.seen.length, before + 1);
  });

  await t.test('the operational endpoints answer only well-formed requests too', async (t) => {
    t.equal((await send('GET /healthz', 'Host: 127.0.0.1\r\n')).status, 200);
    t.equal((await send('GET http://127.0.0.1/healthz', 'Host: 127.0.0.1\r\n')).status, 400);
  });
});
