import t from 'tap';
import { bootstrap } from '../../../control-plane/bootstrap.js';
import { startTestControlPlane } from '../../helpers/control-plane.js';
import { testProviders } from '../../helpers/database.js';

// The dashboard's session cookie and its CSRF check over HTTP, without a browser (the browser
// walks the same path in test/dashboard/dashboard.test.ts).
for (const provider of testProviders()) {
  t.test(`the session cookie on ${provider}`, async (t) => {
    const cp = await startTestControlPlane(t, provider);
    const password = 'correct horse battery';
    await bootstrap(cp.db, { email: 'dana@example.com', organizationName: 'Acme', password });
    const signIn = await fetch(`${cp.url}/v1/auth/sign-in`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: 'dana@example.com', password }),
    });
    t.equal(signIn.status, 200);
    const set = signIn.headers.getSetCookie();
    const session = set.find((c) => c.startsWith('__Host-hub_session='))!;
    const csrf = set.find((c) => c.startsWith('__Host-hub_csrf='))!;
    t.match(session, /; Path=\/; Secure; SameSite=Strict; HttpOnly; Max-Age=\d+$/, 'host-only, secure, strict, unreadable by script');
    t.notMatch(session, /Domain=/i, 'no Domain: no sibling host receives or sets it');
    t.match(csrf, /; Path=\/; Secure; SameSite=Strict; Max-Age=\d+$/);
    const cookie = [session, csrf].map((c) => c.split(';', 1)[0]).join('; ');
    const csrfToken = csrf.split(';', 1)[0]!.split('=')[1]!;
    const call = (method: string, path: string, headers: Record<string, string>, body?: unknown) =>
      fetch(`${cp.url}${path}`, {
        method,
        headers: { 'content-type': 'application/json', ...headers },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });

    t.equal((await call('GET', '/v1/api-keys', { cookie })).status, 200, 'a read needs the cookie only');
    const key = { name: 'CI', scopes: ['admin:read'] };
    t.match(
      await (await call('POST', '/v1/api-keys', { cookie }, key)).json(),
      { error: 'csrf_check_failed' },
      'a write without the token',
    );
    t.equal((await call('POST', '/v1/api-keys', { cookie, 'x-hub-csrf': 'forged' }, key)).status, 403, 'or with another');
    t.equal(
      (await call('POST', '/v1/api-keys', { cookie, 'x-hub-csrf': csrfToken, 'sec-fetch-site': 'same-site' }, key)).status,
      403,
      'or from a sibling host, token or not',
    );
    t.equal((await call('POST', '/v1/api-keys', { cookie, 'x-hub-csrf': csrfToken }, key)).status, 201, 'with it');

    const planted = `${cookie}; __Host-hub_session=hubses_planted`;
    t.match(await call('GET', '/v1/api-keys', { cookie: planted }), { status: 401 }, 'two session cookies sign in as no one');
    t.match(await call('GET', '/v1/api-keys', { cookie: 'hub_session=x' }), { status: 401 }, 'the old name is no session');
  });
}
