import t from 'tap';
import { MAX_JSON_DEPTH } from '../../../runtime/json-body.js';
import { startTestControlPlane } from '../../helpers/control-plane.js';
import { testProviders } from '../../helpers/database.js';
import { managementClient } from '../../helpers/management.js';

// Bodies built to break the server rather than to be served: nested thousands deep (which
// overflowed the stack below the JSON reader) or carrying NUL characters (which PostgreSQL cannot
// store). Each is a 400 envelope on both databases, and nothing is written.

const deep = (levels: number) => `{"name":${'['.repeat(levels)}1${']'.repeat(levels)}}`;
const NESTED = 'The request body nests deeper than 32 levels';
const NUL = 'The request body must not contain NUL characters';

for (const provider of testProviders()) {
  t.test(provider, async (t) => {
    const cp = await startTestControlPlane(t, provider);
    const api = managementClient(cp.url);
    const { apiKey: key } = await cp.bootstrap();
    const json = { 'content-type': 'application/json' };
    const raw = (path: string, rawBody: string, token?: string) => api.call('POST', path, { token, rawBody, headers: json });

    t.test('JSON nested thousands of levels deep is a 400, with or without credentials', async (t) => {
      const body = deep(12_500); // 25 KB
      t.same(await raw('/v1/sellers', body, key).then((r) => [r.status, r.body]), [400, { error: 'invalid_request', reason: NESTED }]);
      t.same(await raw('/v1/auth/sign-in', body).then((r) => [r.status, r.body]), [400, { error: 'invalid_request', reason: NESTED }]);
      t.same(await raw('/v1/usage/check', body, key).then((r) => [r.status, r.body]), [400, { error: 'invalid_request', reason: NESTED }]);
      const anonymous = await raw('/v1/sellers', body);
      t.ok(anonymous.status === 400 || anonymous.status === 401, `no credentials: ${anonymous.status}`);
      t.equal(MAX_JSON_DEPTH, 32);
      t.not((await raw('/v1/sellers', deep(MAX_JSON_DEPTH - 1), key)).body.reason, NESTED, 'the limit itself passes the reader');
    });

    t.test('NUL characters are refused at the door, on both databases alike', async (t) => {
      const cases: [string, unknown, string | undefined][] = [
        ['/v1/sellers', { name: 'We\u0000ather', slug: 'weather', upstreamBaseUrl: 'https://api.weather.example' }, key],
        ['/v1/auth/sign-in', { email: 'owner\u0000@example.com', password: 'correct horse' }, undefined],
        ['/v1/usage/check', { zcRequestId: 'hubreq_x', serviceSlug: 'sea\u0000rch', usage: [{ meterSlug: 'calls', quantity: 1 }] }, key],
        ['/v1/usage/check', { zcRequestId: 'hubreq_x', serviceSlug: 'search', usage: [{ meterSlug: 'ca\u0000lls', quantity: 1 }] }, key],
        ['/v1/usage', { idempotencyKey: 'k\u0000', zcRequestId: 'hubreq_x', serviceSlug: 'search', usage: [] }, key],
        ['/v1/sellers', { 'na\u0000me': 'x' }, key],
      ];
      for (const [path, body, token] of cases) {
        const reply = await raw(path, JSON.stringify(body), token);
        t.same([reply.status, reply.body], [400, { error: 'invalid_request', reason: NUL }], `${path} ${JSON.stringify(body)}`);
      }
      t.same((await api.get('/v1/sellers', key)).body, { sellers: [] }, 'nothing was created');
    });
  });
}
