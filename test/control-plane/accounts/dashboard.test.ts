import t from 'tap';
import { createSession } from '../../../control-plane/auth/credentials.js';
import { bootstrap } from '../../../control-plane/bootstrap.js';
import { startTestControlPlane } from '../../helpers/control-plane.js';
import { testProviders } from '../../helpers/database.js';
import { addMember } from '../../helpers/invitations.js';
import { managementClient } from '../../helpers/management.js';
import { startTestSmtpServer } from '../../helpers/smtp-server.js';

const PASSWORD = 'correct horse battery';

for (const provider of testProviders()) {
  t.test(provider, async (t) => {
    const smtp = await startTestSmtpServer(t);
    const cp = await startTestControlPlane(t, provider, { HUB_SMTP_URL: smtp.url });
    const api = managementClient(cp.url);
    const admin = await bootstrap(cp.db, { email: `admin-${provider}@example.com`, organizationName: 'Acme', password: PASSWORD });

    t.test('sign in, use the session, sign out', async (t) => {
      const signedIn = await api.post('/v1/auth/sign-in', undefined, { email: `  ADMIN-${provider}@Example.com `, password: PASSWORD });
      t.equal(signedIn.status, 200);
      t.match(signedIn.body, {
        sessionToken: /^hubses_/,
        expiresAt: String,
        user: { id: admin.userId, email: admin.email, name: null },
        currentOrganizationId: admin.organizationId,
      });
      const lifetime = Date.parse(signedIn.body.expiresAt) - Date.now();
      t.ok(lifetime > 29.9 * 86_400_000 && lifetime <= 30 * 86_400_000, 'sessions last 30 days');
      const token = signedIn.body.sessionToken;
      t.match(await api.get('/v1/users/me', token), {
        status: 200,
        body: { user: { email: admin.email }, currentOrganizationId: admin.organizationId },
      });

      t.match(await api.post('/v1/auth/sign-in', undefined, { email: admin.email, password: 'wrong password' }), {
        status: 401,
        body: { error: 'invalid_credentials' },
      });
      t.match(await api.post('/v1/auth/sign-in', undefined, { email: 'nobody@example.com', password: PASSWORD }), {
        status: 401,
        body: { error: 'invalid_credentials' },
      });
      t.match(await api.post('/v1/auth/sign-in', undefined, { email: 'not an email', password: PASSWORD }), {
        status: 400,
        body: { error: /^email: / },
      });
      t.match(await api.post('/v1/auth/sign-in', undefined, { email: admin.email }), { status: 400, body: { error: /^password: / } });

      t.equal((await api.post('/v1/auth/sign-out', token)).status, 204);
      t.match(await api.get('/v1/users/me', token), { status: 401, body: { error: 'invalid_token' } });
      t.match(await api.post('/v1/auth/sign-out', token), { status: 401, body: { error: 'invalid_token' } });
    });

    t.test('organizations: list, current, switch', async (t) => {
      const second = await bootstrap(cp.db, { email: admin.email, organizationName: 'Second', password: PASSWORD, another: true });
      const stranger = await cp.bootstrap();
      const token = admin.sessionToken;
      const listed = await api.get('/v1/organizations', token);
      t.same(listed.body, {
        organizations: [
          { id: admin.organizationId, name: 'Acme', role: 'admin', current: true },
          { id: second.organizationId, name: 'Second', role: 'admin', current: false },
        ],
      });
      t.same((await api.get('/v1/organizations/current', token)).body, {
        organization: { id: admin.organizationId, name: 'Acme', role: 'admin', current: true },
      });

      const switched = await api.put('/v1/organizations/current', token, { organizationId: second.organizationId });
      t.same(switched.body, { organization: { id: second.organizationId, name: 'Second', role: 'admin', current: true } });
      t.same((await api.get('/v1/sellers', token)).body, { sellers: [] }, 'catalog routes now act in the second organization');
      t.match(await api.put('/v1/organizations/current', token, { organizationId: stranger.organizationId }), {
        status: 404,
        body: { error: 'organization_not_found' },
      });
      t.match(await api.put('/v1/organizations/current', token, { organizationId: 'org_nope' }), {
        status: 400,
        body: { error: /^organizationId: / },
      });
      t.equal((await api.put('/v1/organizations/current', token, { organizationId: admin.organizationId })).status, 200);
    });

    t.test('members and roles', async (t) => {
      const token = admin.sessionToken;
      const memberToken = await addMember(api, smtp, token, {
        email: `Member-${provider}@example.com`,
        role: 'member',
        password: PASSWORD,
        name: 'Mia',
      });
      const added = (await api.get('/v1/organizations/current/members', token)).body.members.find(
        (m: { email: string }) => m.email === `member-${provider}@example.com`,
      );
      t.match(added, { id: /^mem_/, userId: /^usr_/, name: 'Mia', role: 'member' });
      t.match(await api.post('/v1/organizations/current/members', token, { email: `member-${provider}@example.com`, role: 'admin' }), {
        status: 409,
        body: { error: 'duplicate_member' },
      });
      t.match(await api.post('/v1/organizations/current/members', token, { email: 'x@example.com', role: 'owner' }), {
        status: 400,
        body: { error: /^role: / },
      });

      t.same(
        (await api.get('/v1/organizations/current/members', memberToken)).body.members.map((m: { role: string }) => m.role),
        ['admin', 'member'],
      );
      t.match(await api.post('/v1/api-keys', memberToken, { name: 'mine', scopes: ['admin:read'] }), {
        status: 403,
        body: { error: 'organization_permission_required' },
      });
      t.equal(
        (await api.post('/v1/sellers', memberToken, { name: 'M', slug: `member-made-${provider}`, upstreamBaseUrl: 'https://m.example' }))
          .status,
        201,
        'members edit the catalog',
      );

      const adminMembership = (await api.get('/v1/organizations/current/members', token)).body.members.find(
        (m: { role: string }) => m.role === 'admin',
      );
      t.match(await api.patch(`/v1/organizations/current/members/${adminMembership.id}`, token, { role: 'member' }), {
        status: 409,
        body: { error: 'last_admin' },
      });
      t.match(await api.delete(`/v1/organizations/current/members/${adminMembership.id}`, token), {
        status: 409,
        body: { error: 'last_admin' },
      });

      const promoted = await api.patch(`/v1/organizations/current/members/${added.id}`, token, { role: 'admin' });
      t.match(promoted, { status: 200, body: { member: { role: 'admin' } } });
      t.equal(
        (await api.post('/v1/api-keys', memberToken, { name: 'now allowed', scopes: ['admin:read'] })).status,
        201,
        'the new role applies at once',
      );
      t.equal((await api.patch(`/v1/organizations/current/members/${added.id}`, token, { role: 'member' })).status, 200);

      t.equal((await api.delete(`/v1/organizations/current/members/${added.id}`, token)).status, 204);
      t.match(
        await api.get('/v1/sellers', memberToken),
        { status: 403, body: { error: 'organization_permission_required' } },
        'a removed member loses access',
      );
      t.match(await api.delete(`/v1/organizations/current/members/${added.id}`, token), {
        status: 404,
        body: { error: 'membership_not_found' },
      });
    });

    t.test('API keys: created with a session only, shown once, listed, revoked', async (t) => {
      const token = admin.sessionToken;
      const created = await api.post('/v1/api-keys', token, { name: 'CI', scopes: ['admin:read', 'usage:write'] });
      t.equal(created.status, 201);
      t.match(created.body, {
        key: /^hub_[0-9A-Za-z]{40}$/,
        apiKey: { id: /^ak_/, name: 'CI', scopes: ['admin:read', 'usage:write'], lastUsedAt: null },
      });
      t.equal(created.body.apiKey.keyPrefix, created.body.key.slice(0, created.body.apiKey.keyPrefix.length));
      t.same(Object.keys(created.body.apiKey).sort(), ['createdAt', 'id', 'keyPrefix', 'lastUsedAt', 'name', 'scopes']);

      const listed = (await api.get('/v1/api-keys/', token)).body.apiKeys;
      t.same(
        listed.find((k: { id: string }) => k.id === created.body.apiKey.id),
        created.body.apiKey,
      );
      t.notOk(JSON.stringify(listed).includes(created.body.key), 'the key is never shown again');

      t.match(
        await api.post('/v1/api-keys', created.body.key, { name: 'from a key', scopes: ['admin:read'] }),
        { status: 403, body: { error: 'auth_type_not_allowed' } },
        'API keys cannot create API keys',
      );
      t.match(await api.post('/v1/api-keys', token, { name: 'x', scopes: [] }), { status: 400, body: { error: /^scopes: / } });
      t.match(await api.post('/v1/api-keys', token, { name: 'x', scopes: ['admin:everything'] }), {
        status: 400,
        body: { error: /^scopes\.0: / },
      });
      t.match(await api.post('/v1/api-keys', token, { name: 'x', scopes: ['admin:read', 'admin:read'] }), {
        status: 400,
        body: { error: /^scopes: / },
      });

      t.equal((await api.get('/v1/sellers', created.body.key)).status, 200);
      t.equal((await api.delete(`/v1/api-keys/${created.body.apiKey.id}`, token)).status, 204);
      t.match(
        await api.get('/v1/sellers', created.body.key),
        { status: 401, body: { error: 'invalid_token' } },
        'a revoked key is refused',
      );
      t.notOk(
        (await api.get('/v1/api-keys', token)).body.apiKeys.some((k: { id: string }) => k.id === created.body.apiKey.id),
        'and gone from the list',
      );
      t.match(await api.delete(`/v1/api-keys/${created.body.apiKey.id}`, token), { status: 404, body: { error: 'api_key_not_found' } });
    });

    t.test('lastUsedAt is kept current without a write per request', async (t) => {
      const { key, apiKey } = await (async () => {
        const reply = await api.post('/v1/api-keys', admin.sessionToken, { name: 'watched', scopes: ['admin:read'] });
        return { key: reply.body.key as string, apiKey: reply.body.apiKey as { id: string } };
      })();
      const lastUsed = async () => (await cp.db.apiKey.findUniqueOrThrow({ where: { id: apiKey.id } })).lastUsedAt;
      t.equal(await lastUsed(), null);
      await api.get('/v1/sellers', key);
      const first = await lastUsed();
      t.ok(first, 'set on first use');
      await api.get('/v1/sellers', key);
      await api.get('/v1/sellers', key);
      t.same(await lastUsed(), first, 'not rewritten within the minute');
      await cp.db.apiKey.update({ where: { id: apiKey.id }, data: { lastUsedAt: new Date(Date.now() - 61_000) } });
      await api.get('/v1/sellers', key);
      t.ok((await lastUsed())!.getTime() > Date.now() - 5_000, 'refreshed once stale');
      const listed = (await api.get('/v1/api-keys', admin.sessionToken)).body.apiKeys.find((k: { id: string }) => k.id === apiKey.id);
      t.equal(listed.lastUsedAt, (await lastUsed())!.toISOString());

      const { token, session } = await createSession(cp.db, admin.userId, admin.organizationId);
      await api.get('/v1/users/me', token);
      t.ok((await cp.db.session.findUniqueOrThrow({ where: { id: session.id } })).lastUsedAt, 'sessions too');
    });

    t.test('hub bootstrap keeps working alongside', async (t) => {
      const result = await bootstrap(cp.db, {
        email: `boot-${provider}@example.com`,
        organizationName: 'Booted',
        password: PASSWORD,
        another: true,
      });
      t.equal((await api.get('/v1/sellers', result.apiKey)).status, 200);
      t.equal((await api.get('/v1/api-keys', result.sessionToken)).status, 200);
      t.equal((await api.post('/v1/auth/sign-in', undefined, { email: result.email, password: PASSWORD })).status, 200);
    });
  });
}
