import { createServer, type Server } from 'node:http';
import { gzipSync } from 'node:zlib';
import express from 'express';
import Fastify from 'fastify';
import t from 'tap';
import { closeServer } from '../../runtime/http-server.js';
import { hubExpress, hubFastify, hubIdentity, sendJson, type VerifyOptions, withHubSignature } from '../../sdk/index.js';
import { newId } from '../../shared/ids.js';
import { newToken } from '../../shared/tokens.js';
import { kid, nowSeconds, onLoopback, secrets, send } from '../helpers/signed-request.js';

// spec: Authentication › Request signature; Headers on proxied requests; Bodies the seller's API
// returns to the service (401 invalid_zeroclick_signature before any other work).
const options: VerifyOptions = { secrets, maxBodyBytes: 1024 };
const agentId = newId('agent');
const buyerId = newId('buyer');

type Echo = { identity: unknown; body: string; handled: true };

// The same seller endpoint on each binding: it echoes what the middleware handed over.
const bindings: Record<string, () => Promise<{ port: number; close: () => Promise<void>; handled: () => number }>> = {
  'node:http': async () => {
    let handled = 0;
    const server = createServer(
      withHubSignature((_req, res, { identity, body }) => {
        handled++;
        sendJson(res, 200, { identity, body: body.toString('utf8'), handled: true } satisfies Echo);
      }, options),
    );
    return { port: await onLoopback(server), close: () => closeServer(server, 100), handled: () => handled };
  },
  express: async () => {
    let handled = 0;
    const app = express();
    const router = express.Router();
    router.use(hubExpress(options));
    router.all('/{*rest}', (req, res) => {
      handled++;
      res.json({ identity: hubIdentity(req), body: (req.body as Buffer).toString('utf8'), handled: true });
    });
    // Mounted under a prefix: Express strips it from req.url, the signature covers the original.
    app.use('/api', router);
    const server = app.listen(0, '127.0.0.1') as Server;
    await new Promise((resolve) => server.once('listening', resolve));
    return { port: (server.address() as { port: number }).port, close: () => closeServer(server, 100), handled: () => handled };
  },
  fastify: async () => {
    let handled = 0;
    const app = Fastify({ bodyLimit: 1024 });
    app.addHook('preParsing', hubFastify(options));
    // A seller's own async onSend hook (a session store, say): Fastify's reply has not ended when
    // the signature hook returns, and must still not reach the handler.
    app.addHook('onSend', async (_request, _reply, payload) => {
      await new Promise((resolve) => setTimeout(resolve, 20));
      return payload;
    });
    app.all('/*', async (request) => {
      handled++;
      // Fastify still parses JSON after the hook: the hook hands it the same bytes.
      return {
        identity: hubIdentity(request),
        body: typeof request.body === 'string' ? request.body : JSON.stringify(request.body ?? ''),
        handled: true,
      };
    });
    await app.listen({ port: 0, host: '127.0.0.1' });
    return { port: (app.server.address() as { port: number }).port, close: () => app.close(), handled: () => handled };
  },
};

for (const [name, start] of Object.entries(bindings)) {
  t.test(name, async (t) => {
    const app = await start();
    t.teardown(app.close);
    const prefix = name === 'express' ? '/api' : '';
    const rejected = { error: 'invalid_zeroclick_signature' };

    t.test('a signed request reaches the handler with its identity and body', async (t) => {
      const requestId = newId('request');
      const body = JSON.stringify({ q: 'Zoë ☕' });
      const r = await send(app.port, {
        method: 'POST',
        path: `${prefix}/v1/search?q=a%20b&&x`,
        body,
        requestId,
        agentId,
        buyerId,
        headers: { 'content-type': 'application/json' },
      });
      t.equal(r.status, 200, r.text);
      t.match(r.json.identity, { requestId, agentId, buyerId, sandbox: false, kid });
      t.equal(r.json.body, body);
    });

    t.test('a signed anonymous probe has no agent and no buyer, even if a buyer id is sent', async (t) => {
      const r = await send(app.port, { path: `${prefix}/probe`, buyerId });
      t.equal(r.status, 200, r.text);
      t.notOk('agentId' in r.json.identity && r.json.identity.agentId !== undefined);
      t.equal(r.json.identity.buyerId, undefined, 'a buyer id alone is dropped');
    });

    t.test('a malformed buyer id is dropped; sandbox traffic is flagged', async (t) => {
      const r = await send(app.port, { path: `${prefix}/x`, agentId, buyerId: 'byr_not-an-id', sandbox: true });
      t.equal(r.status, 200);
      t.match(r.json.identity, { agentId, sandbox: true });
      t.equal(r.json.identity.buyerId, undefined);
    });

    // Timestamps an hour off: the exact ±300 s edge is pinned with a fixed clock in the signature unit
    // tests; here a slow run must not drift a case back inside the window before it is sent.
    const failures: [string, Parameters<typeof send>[1]][] = [
      ['no signature header', { path: `${prefix}/x`, signature: null }],
      ['a malformed header', { path: `${prefix}/x`, signature: 'v1=abc' }],
      ['no request id', { path: `${prefix}/x`, requestId: '' }],
      ['a stale timestamp', { path: `${prefix}/x`, timestamp: nowSeconds() - 3600 }],
      ['a timestamp from the future', { path: `${prefix}/x`, timestamp: nowSeconds() + 3600 }],
      ['an unknown kid', { path: `${prefix}/x`, signWith: { kid: newId('signingSecret'), secret: newToken('signingSecret') } }],
      ['the right kid with another secret', { path: `${prefix}/x`, signWith: { kid, secret: newToken('signingSecret') } }],
      [
        'a body other than the one signed',
        { method: 'POST', path: `${prefix}/x`, body: '{"a":2}', signedBody: '{"a":1}', headers: { 'content-type': 'application/json' } },
      ],
      ['a path other than the one signed', { path: `${prefix}/x?b=1&a=2`, signedPath: `${prefix}/x?a=2&b=1` }],
      ['an agent id other than the one signed', { path: `${prefix}/x`, agentId, signedAgentId: newId('agent') }],
      ['an agent id added to a signed anonymous probe', { path: `${prefix}/x`, agentId, signedAgentId: '' }],
      ['an account-route signature on an ordinary route', { path: `${prefix}/x`, purpose: 'access.write' }],
    ];
    for (const [what, request] of failures) {
      t.test(`401 invalid_zeroclick_signature for ${what}, before the handler runs`, async (t) => {
        const before = app.handled();
        const r = await send(app.port, request);
        t.equal(r.status, 401);
        t.same(r.json, rejected);
        t.match(r.headers['content-type'], /^application\/json/);
        t.equal(app.handled(), before, 'handler not called');
      });
    }

    t.test('a body over the limit is refused with 413 before verification', async (t) => {
      const r = await send(app.port, {
        method: 'POST',
        path: `${prefix}/x`,
        body: 'x'.repeat(2048),
        headers: { 'content-type': 'text/plain' },
      });
      t.equal(r.status, 413);
      t.same(r.json, { error: 'payload_too_large' });
    });
  });
}

t.test('express: express.raw() before the middleware is fine; express.json() before it is a setup error', async (t) => {
  const raw = express();
  raw.use(express.raw({ type: '*/*' }), hubExpress(options), (req, res) => {
    res.json({ agentId: hubIdentity(req)?.agentId, body: (req.body as Buffer).toString() });
  });
  const parsed = express();
  parsed.use(express.json(), hubExpress(options), (_req, res) => {
    res.json({ reached: true });
  });
  parsed.use((err: Error, _req: express.Request, res: express.Response, _next: express.NextFunction) => {
    res.status(500).json({ error: err.message });
  });
  const ports: number[] = [];
  for (const app of [raw, parsed]) {
    const server = app.listen(0, '127.0.0.1') as Server;
    await new Promise((resolve) => server.once('listening', resolve));
    t.teardown(() => closeServer(server, 100));
    ports.push((server.address() as { port: number }).port);
  }
  const body = '{"a":1}';
  const ok = await send(ports[0]!, { method: 'POST', path: '/x', body, agentId, headers: { 'content-type': 'application/json' } });
  t.same(ok.json, { agentId, body });
  const misuse = await send(ports[1]!, { method: 'POST', path: '/x', body, agentId, headers: { 'content-type': 'application/json' } });
  t.equal(misuse.status, 500);
  t.match(misuse.json.error, /before express\.json\(\)/);

  // A compressed body: hub signs the bytes as sent. express.raw() inflates them by default.
  const gzipped = {
    method: 'POST',
    path: '/x',
    body: gzipSync(body),
    agentId,
    headers: { 'content-type': 'application/json', 'content-encoding': 'gzip' },
  };
  const asSent = express();
  asSent.use(hubExpress(options), (req, res) => {
    res.json({ agentId: hubIdentity(req)?.agentId, bytes: (req.body as Buffer).length });
  });
  raw.use((err: Error, _req: express.Request, res: express.Response, _next: express.NextFunction) => {
    res.status(500).json({ error: err.message });
  });
  const server = asSent.listen(0, '127.0.0.1') as Server;
  await new Promise((resolve) => server.once('listening', resolve));
  t.teardown(() => closeServer(server, 100));
  t.same(
    (await send((server.address() as { port: number }).port, gzipped)).json,
    { agentId, bytes: gzipped.body.length },
    'mounted first, it keeps them',
  );
  const inflating = await send(ports[0]!, gzipped);
  t.match([inflating.status, inflating.json], [500, { error: /mount it before express\.raw\(\)/ }], 'inflated: a setup error, not a 401');
});

t.test('fastify: rewriteUrl changes the target the router sees, not the one hub signed', async (t) => {
  const app = Fastify({ rewriteUrl: (req) => (req.url ?? '/').replace(/^\/public/, '') });
  app.addHook('preParsing', hubFastify(options));
  app.get('/x', async (request) => ({ agentId: hubIdentity(request)?.agentId }));
  await app.listen({ port: 0, host: '127.0.0.1' });
  t.teardown(() => app.close());
  const res = await send((app.server.address() as { port: number }).port, { method: 'GET', path: '/public/x', agentId });
  t.same([res.status, res.json], [200, { agentId }]);
});
