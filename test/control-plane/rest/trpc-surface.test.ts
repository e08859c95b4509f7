import t from 'tap';
import { request } from 'undici';
import { appRouter } from '../../../control-plane/router.js';
import { startTestControlPlane } from '../../helpers/control-plane.js';
import { testProviders } from '../../helpers/database.js';
import { managementClient } from '../../helpers/management.js';

const NOT_FOR_YOU = "/trpc is hub's internal API, for its proxy; the management API is under /v1.";

// The management API is REST under /v1; /trpc serves only the proxy's internal API, with the
// internal token. Every management procedure, by its tRPC name, must be out of reach there.
const managementProcedures = Object.keys(appRouter._def.procedures);

for (const provider of testProviders()) {
  t.test(`${provider}: /trpc serves the internal API only, to the internal token`, async (t) => {
    const cp = await startTestControlPlane(t, provider);
    const admin = await cp.bootstrap();
    /** A tRPC call as a client sends it: a query as a GET, anything else as a POST of JSON. */
    const call = async (procedure: string, token: string | undefined, method: 'GET' | 'POST' = 'POST', body = '{}') => {
      const res = await request(`${cp.url}/trpc/${procedure}`, {
        method,
        headers: { 'content-type': 'application/json', ...(token === undefined ? {} : { authorization: `Bearer ${token}` }) },
        ...(method === 'POST' ? { body } : {}),
      });
      return { status: res.statusCode, body: (await res.body.json()) as unknown };
    };

    await t.test('no management procedure is callable there, with any credential', async (t) => {
      t.ok(managementProcedures.length > 50, `${managementProcedures.length} procedures`);
      t.ok(
        managementProcedures.every((name) => !name.startsWith('internal.')),
        'the management router holds no internal procedure',
      );
      for (const name of managementProcedures) {
        const bodies = await Promise.all([
          call(name, undefined, 'GET'),
          call(name, admin.apiKey),
          call(name, admin.sessionToken, 'GET'),
          call(name, cp.internalToken),
          call(name, cp.internalToken, 'GET'),
        ]);
        t.same(
          bodies,
          [
            { status: 401, body: { error: 'missing_bearer_token', reason: NOT_FOR_YOU } },
            { status: 401, body: { error: 'invalid_token', reason: NOT_FOR_YOU } },
            { status: 401, body: { error: 'invalid_token', reason: NOT_FOR_YOU } },
            { status: 404, body: { error: 'not_found', reason: 'No such internal procedure; the management API is under /v1.' } },
            { status: 404, body: { error: 'not_found', reason: 'No such internal procedure; the management API is under /v1.' } },
          ],
          name,
        );
      }
      const listed = await managementClient(cp.url).get('/v1/sellers', admin.apiKey);
      t.equal(listed.status, 200, 'they are where they belong, under /v1');
    });

    await t.test('an internal procedure needs the internal token', async (t) => {
      t.same(await call('internal.ping', undefined, 'GET'), { status: 401, body: { error: 'missing_bearer_token', reason: NOT_FOR_YOU } });
      t.same(await call('internal.ping', `${cp.internalToken}x`, 'GET'), {
        status: 401,
        body: { error: 'invalid_token', reason: NOT_FOR_YOU },
      });
      t.same(await call('internal.ping', admin.apiKey, 'GET'), { status: 401, body: { error: 'invalid_token', reason: NOT_FOR_YOU } });
      t.same(await call('internal.ping', cp.internalToken, 'GET'), {
        status: 200,
        body: { result: { data: { ok: true, database: true, payments: 'unavailable', reason: 'no payment rail configured' } } },
      });
    });

    await t.test('an unknown name is 404 with the envelope, batched or not', async (t) => {
      const notFound = {
        status: 404,
        body: { error: 'not_found', reason: 'No such internal procedure; the management API is under /v1.' },
      };
      for (const name of ['nope', 'internal', 'internal.nope', 'internal.ping,sellers.list', '', 'internal.ping/x']) {
        t.same(await call(name, cp.internalToken, 'GET'), notFound, JSON.stringify(name));
      }
      const unknownWithoutToken = await call('nope', undefined);
      t.equal(unknownWithoutToken.status, 401, 'without the token, nothing is told about what exists');
    });
  });
}
