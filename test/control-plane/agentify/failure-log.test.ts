import { Writable } from 'node:stream';
import pino from 'pino';
import t from 'tap';
import type { ResolvedAddress } from '../../../control-plane/agentify/page-fetch.js';
import { createControlPlaneServer } from '../../../control-plane/server.js';
import { closeServer, listen } from '../../../runtime/http-server.js';
import { startTestControlPlane } from '../../helpers/control-plane.js';
import { testProviders } from '../../helpers/database.js';
import { serveOnLoopback } from '../../helpers/loopback-server.js';
import { managementClient } from '../../helpers/management.js';

// A page that cannot be fetched is an expected outcome, not a fault of hub's: each is answered
// 502 page_unreachable and logged as one warning line with its reason, never an error with a stack.

for (const provider of testProviders()) {
  t.test(`expected page failures are one warning line, on ${provider}`, async (t) => {
    const site = await serveOnLoopback(t, (req, res) => {
      if (req.url === '/missing') return res.writeHead(404, { 'content-type': 'text/html' }).end('<p>not here</p>');
      if (req.url === '/down') return res.writeHead(503, { 'content-type': 'text/html' }).end('<p>maintenance</p>');
      if (req.url === '/never') return; // answers nothing: the fetch's deadline ends it
      res.writeHead(200, { 'content-type': 'text/html' }).end('<p>fine</p>');
    });
    const port = new URL(site).port;
    const names: Record<string, ResolvedAddress[]> = { 'site.a.test': [{ address: '127.0.0.1', family: 4 }] };
    const cp = await startTestControlPlane(t, provider, {}, undefined, {
      resolve: async (hostname) => names[hostname] ?? Promise.reject(Object.assign(new Error('not found'), { code: 'ENOTFOUND' })),
      limits: { timeoutMs: 1_000 },
    });
    const lines: Array<Record<string, unknown>> = [];
    const logger = pino(
      { level: 'info' },
      new Writable({ write: (chunk, _encoding, done) => (lines.push(JSON.parse(String(chunk))), done()) }),
    );
    const server = createControlPlaneServer({ ...cp, logger });
    const api = managementClient(`http://127.0.0.1:${await listen(server, 0, '127.0.0.1')}`);
    t.teardown(() => closeServer(server, 1_000));
    const a = await cp.bootstrap();
    for (const [slug, upstreamBaseUrl] of [
      ['plain', `http://site.a.test:${port}`],
      // An https upstream whose port speaks plain HTTP: the TLS handshake fails.
      ['tls', `https://127.0.0.1:${port}`],
      ['gone', 'http://gone.a.test:8080'],
    ]) {
      const created = await api.post('/v1/sellers', a.apiKey, { name: slug, slug: `${slug}-${provider}`, upstreamBaseUrl });
      t.equal(created.status, 201, JSON.stringify(created.body));
    }

    for (const [url, reason] of [
      [`http://site.a.test:${port}/missing`, /answered 404/],
      [`http://site.a.test:${port}/down`, /answered 503/],
      [`http://site.a.test:${port}/never`, /did not arrive within 1 s/],
      [`https://127.0.0.1:${port}/`, /connection to 127\.0\.0\.1:\d+ failed \(ERR_SSL/],
      ['http://gone.a.test:8080/', /does not resolve \(ENOTFOUND\)/],
    ] as const) {
      lines.length = 0;
      const res = await api.get(`/v1/agentify/markdown?url=${encodeURIComponent(url)}`, a.apiKey);
      t.equal(res.status, 502, url);
      t.match(res.body, { error: 'page_unreachable', reason }, url);
      const logged = lines.filter((line) => (line.level as number) >= 40);
      t.equal(logged.length, 1, `one line: ${url}`);
      t.match(
        logged[0],
        { level: 40, path: '/v1/agentify/markdown', status: 502, error: 'page_unreachable', reason },
        `a warning with the reason: ${url}`,
      );
      t.notOk(JSON.stringify(logged[0]).includes('"stack"'), `no stack: ${url}`);
      t.notOk(JSON.stringify(logged[0]).includes('?url='), `no query, which may carry a page's own keys: ${url}`);
    }
  });
}
