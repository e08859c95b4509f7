import type { IncomingMessage } from 'node:http';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import t, { type Test } from 'tap';
import { tagRequest } from '../../runtime/containment.js';
import { closeServer, createHttpServer, listen } from '../../runtime/http-server.js';
import { testProviders } from '../helpers/database.js';
import { startTestHub } from '../helpers/hub.js';
import { rawExchange } from '../helpers/raw-http.js';
import { sellerBehind, startTestUpstream } from '../helpers/upstream.js';

const LIMITS = { HUB_REQUEST_IDLE_TIMEOUT_MS: '300', HUB_REQUEST_TIMEOUT_MS: '1500' };

t.test('slow clients are cut off on both ports; a slow seller is not the client’s fault', async (t) => {
  const hub = await startTestHub(t, testProviders()[0]!, LIMITS);
  const upstream = await startTestUpstream(t);
  await sellerBehind(hub, upstream);
  const proxyPort = Number(new URL(hub.proxyUrl).port);
  const controlPlanePort = Number(new URL(hub.cp.url).port);
  const post = (path: string, host: string, length: number) =>
    `POST ${path} HTTP/1.1\r\nHost: ${host}\r\nContent-Type: application/json\r\nContent-Length: ${length}\r\n\r\n`;

  await t.test('a body that stops arriving is a 408 envelope after the idle limit', async (t) => {
    const before = upstream.seen.length;
    for (const [port, head] of [
      [proxyPort, post('/echo', 'acme.pay.localhost', 10)],
      [controlPlanePort, post('/v1/auth/sign-in', '127.0.0.1', 10)],
      [proxyPort, post('/agents/challenge', 'acme.pay.localhost', 10)],
    ] as const) {
      const answer = await rawExchange(port, [head, '{'], { gapMs: 20 });
      t.equal(answer.status, 408, head.split('\r\n', 1)[0]!);
      t.same(JSON.parse(answer.body), { error: 'request_timeout' });
      t.equal(answer.headers.connection, 'close');
      t.ok(answer.elapsedMs >= 250 && answer.elapsedMs < 1_400, `cut after the idle limit (${Math.round(answer.elapsedMs)} ms)`);
    }
    t.equal(upstream.seen.length, before, 'nothing reached the seller');
  });

  await t.test('a body trickled faster than the idle limit is cut at the total limit', async (t) => {
    const before = upstream.seen.length;
    for (const [port, head] of [
      [proxyPort, post('/echo', 'acme.pay.localhost', 40)],
      [controlPlanePort, post('/v1/auth/sign-in', '127.0.0.1', 40)],
    ] as const) {
      const answer = await rawExchange(port, [head, ...'x'.repeat(40)], { gapMs: 100 });
      t.equal(answer.status, 408, 'Node answers its own 408');
      t.ok(answer.elapsedMs >= 1_400 && answer.elapsedMs < 3_500, `cut at the total limit (${Math.round(answer.elapsedMs)} ms)`);
    }
    t.equal(upstream.seen.length, before, 'nothing reached the seller');
  });

  await t.test('a head that stalls is dropped without an answer', async (t) => {
    const answer = await rawExchange(proxyPort, 'GET /echo HTTP/1.1\r\nHost: acme.pay.localhost\r\n');
    t.equal(answer.status, undefined);
    t.ok(answer.elapsedMs < 1_400, `closed after the idle limit (${Math.round(answer.elapsedMs)} ms)`);
  });

  await t.test('a request that arrived in time waits as long as the seller takes', async (t) => {
    const slow = await hub.pay('acme', '/slow-headers');
    t.equal(slow.status, 200, 'the seller answered after 1 s, past the client idle limit');
    t.same(await slow.json(), { late: true });
    const slowPost = await rawExchange(proxyPort, [
      `${post('/slow-headers', 'acme.pay.localhost', 2).replace('\r\n\r\n', '\r\nConnection: close\r\n\r\n')}`,
      '{}',
    ]);
    t.equal(slowPost.status, 200, 'a body that arrived is not timed while the seller works');
  });

  await t.test('a body with broken framing reaches nothing on either port', async (t) => {
    const before = upstream.seen.length;
    for (const [port, host, path] of [
      [proxyPort, 'acme.pay.localhost', '/echo'],
      [controlPlanePort, '127.0.0.1', '/v1/auth/sign-in'],
    ] as const) {
      const answer = await rawExchange(
        port,
        `POST ${path} HTTP/1.1\r\nHost: ${host}\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}\r\nzz\r\n`,
      );
      t.equal(answer.status, 400, `${path}: 400`);
    }
    t.equal(upstream.seen.length, before, 'nothing reached the seller');
  });

  await t.test('a keep-alive connection serves request after request', async (t) => {
    const get = 'GET /echo HTTP/1.1\r\nHost: acme.pay.localhost\r\n\r\n';
    const answer = await rawExchange(proxyPort, [get, get, `${get.slice(0, -2)}Connection: close\r\n\r\n`], { gapMs: 200 });
    t.equal(answer.raw.match(/HTTP\/1\.1 200 OK/g)?.length, 3, 'three answers over one connection, each within the idle limit');
  });
});

/**
 * A 4 MB body (larger than the sockets' buffers, so the client stalls until hub reads) posted to a
 * server with a 200 ms idle limit whose handler reads the body when `startReading` calls `read`
 * and answers its length: the answer.
 */
async function postHeldBack(t: Test, startReading: (req: IncomingMessage, read: () => void) => void) {
  const body = Buffer.alloc(4 * 1024 * 1024, 0x61);
  const server = createHttpServer(
    (req, res) =>
      startReading(req, async () => {
        let length = 0;
        for await (const chunk of req) length += (chunk as Buffer).length;
        res.end(String(length));
      }),
    { timeoutMs: 5_000, idleTimeoutMs: 200 },
    pino({ level: 'silent' }),
    { accessLog: false },
  );
  const port = await listen(server, 0, '127.0.0.1');
  t.teardown(() => closeServer(server, 100));
  const answer = await rawExchange(port, [
    `POST / HTTP/1.1\r\nHost: a\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n`,
    body,
  ]);
  return { ...answer, length: body.length };
}

t.test('a body hub has not begun to read is not timed as the client’s pause', async (t) => {
  // The handler decides for longer than the idle limit before it reads (as the proxy does while
  // it looks up a seller).
  const answer = await postHeldBack(t, (_, read) => setTimeout(read, 600));
  t.equal(answer.status, 200, 'answered, not 408: the wait was hub’s');
  t.equal(answer.body, String(answer.length), 'the whole body was read');
});

t.test('a body hub begins to read just as the idle limit comes is read, not timed out', async (t) => {
  // The handler starts reading at the very moment the idle timer fires (the request's own timeout
  // event comes just before the response's, where hub judges it), the client's next bytes already
  // waiting on the socket (docs/decisions.md#D-359).
  const answer = await postHeldBack(t, (req, read) => req.once('timeout', read));
  t.equal(answer.status, 200, 'answered, not 408: the client was never idle');
  t.equal(answer.body, String(answer.length), 'the whole body was read');
});

t.test('what the HTTP parser refuses is never handled and is logged at debug', async (t) => {
  const lines: Record<string, unknown>[] = [];
  const sink = new Writable({
    write(chunk, _encoding, done) {
      lines.push(JSON.parse(chunk.toString()));
      done();
    },
  });
  let handled = 0;
  const server = createHttpServer(
    async (req, res) => {
      // A body's framing is parsed after its head reached the handler: the read fails, and only
      // a request read whole counts as handled.
      try {
        for await (const _ of req);
      } catch {
        return;
      }
      handled++;
      res.end('ok');
    },
    { timeoutMs: 5_000, idleTimeoutMs: 2_000 },
    pino({ level: 'debug' }, sink),
    { accessLog: false },
  );
  const port = await listen(server, 0, '127.0.0.1');
  t.teardown(() => closeServer(server, 100));

  const ok = await rawExchange(port, 'GET / HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n');
  t.equal(ok.status, 200);
  t.equal(handled, 1);

  for (const [name, text, status, code] of [
    ['an unknown method', 'FROB / HTTP/1.1\r\nHost: a\r\n\r\n', 400, 'HPE_INVALID_METHOD'],
    ['a malformed request line', 'GET / HTTP/9\r\nHost: a\r\n\r\n', 400, 'HPE_INVALID_VERSION'],
    ['bad chunking', 'POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nx\r\n0\r\n\r\n', 400, 'HPE_INVALID_CHUNK_SIZE'],
    ['headers over 16 KiB', `GET / HTTP/1.1\r\nHost: a\r\nX-Big: ${'b'.repeat(20_000)}\r\n\r\n`, 431, 'HPE_HEADER_OVERFLOW'],
    ['a URL over 16 KiB', `GET /${'u'.repeat(20_000)} HTTP/1.1\r\nHost: a\r\n\r\n`, 431, 'HPE_HEADER_OVERFLOW'],
    [
      'both Content-Length and Transfer-Encoding',
      'POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n',
      400,
      'HPE_INVALID_TRANSFER_ENCODING',
    ],
    ['a missing Host', 'GET / HTTP/1.1\r\n\r\n', 400, undefined],
  ] as const) {
    const before = lines.length;
    const answer = await rawExchange(port, text);
    t.equal(answer.status, status, `${name}: ${status}`);
    t.equal(answer.body, '', `${name}: no body, as Node answers`);
    if (code) {
      t.match(lines.slice(before), [{ level: 20, code, msg: 'request refused by the HTTP parser' }], `${name}: one debug line`);
    }
  }
  t.equal(handled, 1, 'none of them was handled');
});

t.test('the access log: one line per request at info, without the query; off by a setting', async (t) => {
  const serve = async (accessLog: boolean, level: string) => {
    const lines: Record<string, unknown>[] = [];
    const sink = new Writable({
      write(chunk, _encoding, done) {
        lines.push(JSON.parse(chunk.toString()));
        done();
      },
    });
    const server = createHttpServer(
      (req, res) => {
        if (req.url === '/hang') return; // answered never: the client gives up
        if (req.url === '/tagged') tagRequest(res, 'hubreq_0tagged');
        res.writeHead(req.url?.startsWith('/missing') ? 404 : 200).end('ok');
      },
      { timeoutMs: 5_000, idleTimeoutMs: 2_000 },
      pino({ level }, sink),
      { accessLog },
    );
    const port = await listen(server, 0, '127.0.0.1');
    t.teardown(() => closeServer(server, 100));
    return { port, lines };
  };

  const on = await serve(true, 'info');
  await rawExchange(on.port, 'GET /a/b?token=secret HTTP/1.1\r\nHost: weather.pay.localhost\r\nConnection: close\r\n\r\n');
  await rawExchange(on.port, 'POST /missing HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\nConnection: close\r\n\r\n');
  await rawExchange(on.port, 'GET /hang HTTP/1.1\r\nHost: x\r\n\r\n', { waitMs: 200 });
  await rawExchange(on.port, 'GET /tagged HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');
  const token = `hubclm_${'A1b2'.repeat(10)}`;
  await rawExchange(on.port, `POST /agents/claim/confirm/${token} HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\nConnection: close\r\n\r\n`);
  await new Promise((r) => setTimeout(r, 100));
  const requests = on.lines.filter((l) => l.msg === 'request');
  t.equal(requests.length, 5, 'one line per request');
  t.match(requests[0], {
    level: 30,
    reqId: /^r[0-9a-z]+$/,
    method: 'GET',
    path: '/a/b',
    host: 'weather.pay.localhost',
    status: 200,
    ms: Number,
    remoteAddress: '127.0.0.1',
  });
  t.notOk(JSON.stringify(on.lines).includes('secret'), 'the query, which may carry credentials, is not logged');
  t.match(requests[1], { method: 'POST', path: '/missing', status: 404 });
  t.match(requests[2], { path: '/hang', aborted: true }, 'a request whose client left is marked');
  t.equal(new Set(requests.map((l) => l.reqId)).size, 5, 'each with a log id of its own');
  t.notOk('requestId' in requests[0]!, 'hub’s request id only once there is one');
  t.match(requests[3], { path: '/tagged', requestId: 'hubreq_0tagged' }, 'the proxy’s request id, once it names one');
  t.match(requests[4], { path: '/agents/claim/confirm/hubclm_…' }, 'a token in the path is cut to its kind');
  t.notOk(JSON.stringify(on.lines).includes(token));

  const off = await serve(false, 'info');
  await rawExchange(off.port, 'GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');
  t.same(off.lines, [], 'HUB_ACCESS_LOG=off: nothing');
  const quiet = await serve(true, 'warn');
  await rawExchange(quiet.port, 'GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');
  t.same(quiet.lines, [], 'below info: nothing');
});
