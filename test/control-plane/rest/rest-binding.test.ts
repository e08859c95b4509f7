import { request as httpRequest } from 'node:http';
import { Writable } from 'node:stream';
import pino from 'pino';
import t from 'tap';
import { createControlPlaneServer } from '../../../control-plane/server.js';
import { closeServer, listen } from '../../../runtime/http-server.js';
import { startTestControlPlane } from '../../helpers/control-plane.js';
import { testProviders } from '../../helpers/database.js';
import { managementClient } from '../../helpers/management.js';

for (const provider of testProviders()) {
  t.test(provider, async (t) => {
    const cp = await startTestControlPlane(t, provider);
    const api = managementClient(cp.url);
    const { apiKey: key } = await cp.bootstrap();

    t.test('malformed bodies', async (t) => {
      const send = (rawBody: string, contentType?: string) =>
        api.call('POST', '/v1/sellers', { token: key, rawBody, headers: contentType ? { 'content-type': contentType } : {} });
      t.same((await send('{"name":', 'application/json')).body, { error: 'invalid_request', reason: 'The request body is not valid JSON' });
      t.match(await send('{"name":', 'application/json'), { status: 400 });
      t.match(await send('[1,2]', 'application/json'), {
        status: 400,
        body: { error: 'invalid_request', reason: 'The request body must be a JSON object' },
      });
      t.match(await send('"text"', 'application/json'), {
        status: 400,
        body: { error: 'invalid_request', reason: 'The request body must be a JSON object' },
      });
      t.match(await send('null', 'application/json'), {
        status: 400,
        body: { error: 'invalid_request', reason: 'The request body must be a JSON object' },
      });
      t.match(await send('name=x', 'application/x-www-form-urlencoded'), { status: 415, body: { error: 'unsupported_media_type' } });
      t.match(await send('{"name":"x"}'), { status: 415, body: { error: 'unsupported_media_type' } }, 'a body without a content type');
      t.match(await send(JSON.stringify({ name: 'x'.repeat(2 * 1024 * 1024) }), 'application/json'), {
        status: 413,
        body: { error: 'payload_too_large' },
      });
      const charset = await send(
        JSON.stringify({ name: 'Charset', slug: `charset-${provider}`, upstreamBaseUrl: 'https://c.example' }),
        'application/json; charset=utf-8',
      );
      t.equal(charset.status, 201, 'a charset parameter is fine');
      t.match(await send('{}', 'application/json'), { status: 400, body: { error: /^name: / } });
    });

    t.test('credentials are checked before the body is', async (t) => {
      t.match(await api.post('/v1/sellers', undefined, { slug: 'NOT VALID' }), { status: 401, body: { error: 'missing_bearer_token' } });
      t.match(await api.call('GET', '/v1/sellers', { headers: { authorization: 'Basic dXNlcjpwYXNz' } }), {
        status: 401,
        body: { error: 'missing_bearer_token' },
      });
      t.match(
        await api.call('GET', '/v1/sellers', { headers: { authorization: `bearer ${key}` } }),
        { status: 200 },
        'the scheme is case-insensitive',
      );
    });

    t.test('unknown routes and methods', async (t) => {
      t.match(await api.get('/v1/nothing-here', key), { status: 404, body: { error: 'not_found' } });
      t.match(await api.get('/v1/sellers/a/b/c/d', key), { status: 404, body: { error: 'not_found' } });
      const wrongMethod = await api.call('PUT', '/v1/sellers', { token: key, body: {} });
      t.match(wrongMethod, { status: 405, body: { error: 'method_not_allowed' } });
      t.same(wrongMethod.headers.get('allow')?.split(', ').sort(), ['GET', 'POST']);
      t.match(await api.call('POST', '/v1/openapi.json'), { status: 405 });
    });

    t.test('request targets a URL parser would read otherwise, and query names of built-in members', async (t) => {
      // Sent as written (fetch would resolve the dots itself).
      const raw = (method: string, path: string, token?: string) =>
        new Promise<{ status: number; body: unknown }>((resolve, reject) => {
          const url = new URL(cp.url);
          const req = httpRequest(
            { host: url.hostname, port: url.port, method, path, headers: token ? { authorization: `Bearer ${token}` } : {} },
            (res) => {
              let text = '';
              res.setEncoding('utf8').on('data', (chunk) => (text += chunk));
              res.on('end', () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(text) }));
            },
          );
          req.on('error', reject).end();
        });
      for (const [method, path] of [
        ['GET', '/v1/sellers/..'],
        ['GET', '/v1/sellers/%2e%2e'],
        ['GET', '/v1/sellers/.'],
        ['DELETE', '/v1/sellers/.'],
        ['GET', '/v1/sellers/a\\b'],
        ['GET', '/v1/sellers/x/../..'],
      ]) {
        t.same(await raw(method!, path!, key), { status: 404, body: { error: 'not_found' } }, `${method} ${path}`);
      }
      for (const name of ['constructor', '__proto__', 'toString', 'hasOwnProperty']) {
        for (const token of [key, undefined]) {
          t.same(
            await raw('GET', `/v1/sellers?${name}=x`, token),
            { status: 400, body: { error: `Unknown query parameter "${name}"` } },
            `?${name}=x${token ? '' : ', without a token'}`,
          );
        }
      }
      t.match(await raw('GET', '/v1/sellers?unrelated=x', key), { status: 200 }, 'other names are as before');
    });

    t.test('unexpected failures are a bare 500, logged', async (t) => {
      const lines: string[] = [];
      const logger = pino({ level: 'error' }, new Writable({ write: (chunk, _encoding, done) => (lines.push(String(chunk)), done()) }));
      const server = createControlPlaneServer({ ...cp, logger });
      const port = await listen(server, 0, '127.0.0.1');
      t.teardown(() => closeServer(server, 1_000));
      const broken = managementClient(`http://127.0.0.1:${port}`);

      const seller = (
        await broken.post('/v1/sellers', key, { name: 'Broken', slug: `broken-${provider}`, upstreamBaseUrl: 'https://b.example' })
      ).body.seller;
      const service = (await broken.post('/v1/services', key, { sellerId: seller.id, name: 'S', slug: 's' })).body.service;
      await cp.db.$executeRawUnsafe(provider === 'postgresql' ? 'DROP TABLE "Meter" CASCADE' : 'DROP TABLE "Meter"');

      const reply = await broken.get(`/v1/meters?serviceId=${service.id}`, key);
      t.equal(reply.status, 500);
      t.same(reply.body, { error: 'Internal server error' }, 'nothing internal');
      t.ok(
        lines.some((line) => /Meter/.test(line)),
        'the cause is in the log',
      );
    });

    t.test('the OpenAPI document', async (t) => {
      const reply = await api.get('/v1/openapi.json');
      t.equal(reply.status, 200, 'served without a credential');
      const document = reply.body;
      t.match(document.openapi, /^3\.\d+\.\d+$/);
      t.equal(document.info.version, '1.0.0');
      t.match(document.components.securitySchemes, { bearer: { type: 'http', scheme: 'bearer' } });

      const operationIds = new Set<string>();
      const refs: string[] = [];
      JSON.stringify(document, (k, v) => (k === '$ref' && refs.push(v), v));
      for (const ref of refs) {
        const target = ref
          .replace(/^#\//, '')
          .split('/')
          .reduce((node: any, part) => node?.[part], document);
        t.ok(target, `${ref} resolves`);
      }
      for (const [path, operations] of Object.entries<Record<string, any>>(document.paths)) {
        t.match(path, /^\/v1\//);
        for (const [method, operation] of Object.entries(operations)) {
          const name = `${method.toUpperCase()} ${path}`;
          t.notOk(operationIds.has(operation.operationId), `${name}: unique operationId`);
          operationIds.add(operation.operationId);
          const statuses = Object.keys(operation.responses);
          t.ok(
            statuses.some((s) => /^2\d\d$/.test(s)),
            `${name}: a success response`,
          );
          t.ok(statuses.includes('400') && statuses.includes('500'), `${name}: validation and server errors`);
          for (const status of statuses.filter((s) => !s.startsWith('2'))) {
            t.same(
              operation.responses[status].content['application/json'].schema,
              { $ref: '#/components/schemas/Error' },
              `${name} ${status}: the envelope`,
            );
          }
        }
      }
      t.same(Object.keys(document.paths['/v1/sellers'].post.responses), ['201', '400', '401', '403', '409', '422', '500']);
      t.match(document.paths['/v1/sellers'].post.responses['422'].description, /upstream_not_allowed/);
      t.match(document.paths['/v1/sellers'].post.responses['409'].description, /duplicate_slug/);
      t.same(Object.keys(document.paths['/v1/sellers/{sellerId}'].delete.responses), ['204', '400', '401', '403', '404', '409', '500']);
      t.match(document.paths['/v1/plan-meter-prices'].post.responses['422'].description, /payg_price_not_whole_cents/);
      t.match(document.paths['/v1/api-keys'].get.description, /Dashboard session/);
      t.match(document.paths['/v1/plans/{planId}'].get.responses['200'].content['application/json'].schema, { properties: { plan: {} } });
      t.notOk(document.paths['/v1/auth/sign-in'].post.security, 'sign-in needs no credential');
      t.notOk(JSON.stringify(document).includes('/trpc'), 'internal procedures are not in it');
    });
  });
}
