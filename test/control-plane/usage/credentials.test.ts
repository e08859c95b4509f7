import t from 'tap';
import { createApiKey, createSession } from '../../../control-plane/auth/credentials.js';
import { credentialCache } from '../../../control-plane/usage/credential-cache.js';
import type { Scope } from '../../../shared/scopes.js';
import { bindingsAndProviders, usageWorld } from '../../helpers/usage-world.js';

// The Usage route group takes API keys only: usage:read for checks, usage:write for reports
// (spec: Authentication › Scopes, Route groups). Refused calls record nothing.
for (const [provider, binding] of bindingsAndProviders()) {
  t.test(`usage credentials on ${provider}, ${binding} binding`, async (t) => {
    const w = await usageWorld(t, provider, binding);
    const agentId = await w.agent();
    const accessId = await w.access({ agentId });
    const zcRequestId = await w.request({ agentId });
    const keyWith = async (scopes: Scope[]) =>
      (await createApiKey(w.db, { organizationId: w.organizationId, name: scopes.join(' ') || 'none', scopes })).key;
    const revoked = await createApiKey(w.db, { organizationId: w.organizationId, name: 'revoked', scopes: ['usage:read', 'usage:write'] });
    await w.db.apiKey.update({ where: { id: revoked.apiKey.id }, data: { revokedAt: new Date() } });
    const session = (await createSession(w.db, w.boot.userId, w.organizationId)).token;

    const checkBody = { zcRequestId, serviceSlug: 'forecast', usage: [{ meterSlug: 'requests', quantity: 1 }] };
    let n = 0;
    const reportBody = () => ({ idempotencyKey: `credentials-${++n}`, ...checkBody });

    const cases: [string, string | null, { check: [number, string?]; report: [number, string?] }][] = [
      ['no bearer token', null, { check: [401, 'missing_bearer_token'], report: [401, 'missing_bearer_token'] }],
      ['a token that is not hub’s', 'not-a-hub-token', { check: [401, 'invalid_token'], report: [401, 'invalid_token'] }],
      ['an unknown API key', `hub_${'x'.repeat(40)}`, { check: [401, 'invalid_token'], report: [401, 'invalid_token'] }],
      ['a revoked API key', revoked.key, { check: [401, 'invalid_token'], report: [401, 'invalid_token'] }],
      ['a dashboard session', session, { check: [403, 'auth_type_not_allowed'], report: [403, 'auth_type_not_allowed'] }],
      [
        'a key with admin scopes only',
        await keyWith(['admin:read', 'admin:write']),
        { check: [403, 'insufficient_scope'], report: [403, 'insufficient_scope'] },
      ],
      ['a key with usage:read', await keyWith(['usage:read']), { check: [200], report: [403, 'insufficient_scope'] }],
      ['a key with usage:write', await keyWith(['usage:write']), { check: [403, 'insufficient_scope'], report: [200] }],
    ];
    for (const [label, token, expected] of cases) {
      await t.test(label, async (t) => {
        const check = await w.check(checkBody, token);
        t.equal(check.status, expected.check[0], 'check status');
        if (expected.check[1]) t.equal(check.body.error, expected.check[1], 'check code');
        const report = await w.report(reportBody(), token);
        t.equal(report.status, expected.report[0], 'report status');
        if (expected.report[1]) t.equal(report.body.error, expected.report[1], 'report code');
      });
    }

    await t.test('credentials are checked before the body: a bad body with no key is 401', async (t) => {
      t.equal((await w.report({ nonsense: true }, null)).status, 401);
    });

    await t.test('other methods on the usage paths are 405, and answers are never cached', async (t) => {
      const get = await w.api.call('GET', '/v1/usage/check', { token: w.boot.apiKey });
      t.equal(get.status, 405);
      t.equal(get.headers.get('allow'), 'POST');
      const check = await w.check(checkBody);
      t.equal(check.headers.get('cache-control'), 'no-store');
      t.match(check.headers.get('content-type'), /^application\/json/);
    });

    await t.test('only the usage:write key recorded anything', async (t) => {
      t.equal(await w.db.usageEvent.count(), 1);
      t.equal(await w.balance(accessId), 1_000_000n, 'one included request, no credit');
    });
  });
}

// The direct binding remembers verified API keys briefly (credential-cache.ts): a revoked key
// works there for at most the cache's lifetime.
for (const [provider] of bindingsAndProviders().filter(([, binding]) => binding === 'direct')) {
  t.test(`the credential cache on ${provider}`, async (t) => {
    const w = await usageWorld(t, provider);
    const cache = credentialCache(w.db, 1_000);
    const { key, apiKey } = await createApiKey(w.db, { organizationId: w.organizationId, name: 'cached', scopes: ['usage:read'] });
    const headers = { authorization: `Bearer ${key}` };
    t.match(await cache.authenticate(headers, 0), { kind: 'apiKey', id: apiKey.id, organizationId: w.organizationId });
    await w.db.apiKey.update({ where: { id: apiKey.id }, data: { revokedAt: new Date() } });
    t.match(await cache.authenticate(headers, 999), { id: apiKey.id }, 'still remembered within its lifetime');
    await t.rejects(cache.authenticate(headers, 1_000), { code: 'invalid_token' }, 'looked up again after it, and refused');
    await t.rejects(cache.authenticate(headers, 1_001), { code: 'invalid_token' }, 'a refused key is not remembered');
    await t.rejects(cache.authenticate({}, 0), { code: 'missing_bearer_token' });
    const session = (await createSession(w.db, w.boot.userId, w.organizationId)).token;
    t.match(
      await cache.authenticate({ authorization: `Bearer ${session}` }, 0),
      { kind: 'session' },
      'sessions pass through (the route refuses them)',
    );
  });
}
